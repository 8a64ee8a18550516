import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

let harness: ToolHarness;
afterEach(() => harness.dispose());

/** Bytes this process has read so far, through any thread (libuv's pool included). */
function bytesReadSoFar(): number {
  const line = readFileSync("/proc/self/io", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("rchar:"));
  return Number(line?.split(/\s+/)[1]);
}

/** What one call read from disk, counted (not timed). */
async function bytesReadBy(call: () => Promise<unknown>): Promise<number> {
  const before = bytesReadSoFar();
  await call();
  return bytesReadSoFar() - before;
}

/**
 * A sandboxed agent makes a huge file at no cost (`truncate -s 1T`): text first, then nothing but
 * NUL bytes, which take no disk. Its first 8 KiB look like text, so it is not taken for binary.
 */
function sparseFile(file: string, bytes: number): void {
  const descriptor = openSync(file, "w");
  writeSync(descriptor, "hello\n".repeat(3_000));
  ftruncateSync(descriptor, bytes);
  closeSync(descriptor);
}

describe("file tools on a huge sparse file", { timeout: 120_000 }, () => {
  it("stop reading at the first NUL byte instead of reading it to its end", async () => {
    harness = new ToolHarness({ permissions: { allow: ["search_files", "read_file"] } });
    const size = 1024 ** 3;
    sparseFile(path.join(harness.workdir, "big.txt"), size);
    let result: { ok: boolean; output: string } | undefined;
    const searched = await bytesReadBy(async () => {
      result = await harness.call("search_files", { pattern: "needle" });
    });
    expect(result).toMatchObject({ ok: true });
    const read = await bytesReadBy(async () => {
      result = await harness.call("read_file", { path: "big.txt", offset: 1_000_000 });
    });
    expect(searched).toBeLessThan(size / 64);
    expect(read).toBeLessThan(size / 64);
    // The text before the NUL bytes is still read and searched.
    expect((await harness.call("search_files", { pattern: "hello", max_results: 1 })).output).toContain(
      "big.txt:1: hello",
    );
    expect((await harness.call("read_file", { path: "big.txt", offset: 2_999, limit: 5 })).output).toContain(
      "hello",
    );
  });
});
