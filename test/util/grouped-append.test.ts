import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupedAppend } from "../../src/util/grouped-append.js";

describe("GroupedAppend", () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-grouped-append-"));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("writes the lines of one turn together, in order, before any of them resolves", async () => {
    const file = path.join(directory, "index.jsonl");
    const index = new GroupedAppend(file);
    const seen: string[] = [];
    const appended = Array.from({ length: 40 }, (_, line) =>
      index.append(`line ${line}`).then(() => seen.push(readFileSync(file, "utf8"))),
    );
    expect(index.pending).toBe(40);
    await Promise.all(appended);
    const expected = Array.from({ length: 40 }, (_, line) => `line ${line}\n`).join("");
    // Each caller found every line of its turn in the file (40 > one release slice).
    expect(seen).toEqual(Array.from({ length: 40 }, () => expected));
    expect(index.pending).toBe(0);
    await index.append("next turn");
    index.close();
    expect(readFileSync(file, "utf8")).toBe(`${expected}next turn\n`);
  });

  it("rejects the lines of a write that failed, and writes the next ones once it can", async () => {
    const file = path.join(directory, "missing", "index.jsonl");
    const index = new GroupedAppend(file);
    await expect(index.append("lost")).rejects.toMatchObject({
      code: "STORE_WRITE_FAILED",
      cause: { code: "ENOENT" },
    });
    mkdirSync(path.dirname(file));
    await index.append("kept");
    index.close();
    expect(readFileSync(file, "utf8")).toBe("kept\n");
  });
});
