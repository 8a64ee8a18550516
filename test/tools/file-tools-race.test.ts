import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

const SWAPPER = fileURLToPath(new URL("../fixtures/file-race/swap-names.mjs", import.meta.url));
const MARKER = "MARKER-outside-7f3a";
/** In every file, inside and out; not a valid regex, so searched as plain text without a worker thread. */
const COMMON = "text (";
/** Calls per tool form; eight forms, so about 3,000 calls in all. */
const ATTEMPTS = Number(process.env["AGENTD_RACE_ATTEMPTS"] ?? 375);

let harness: ToolHarness;
let swapper: ChildProcess;

/** Every file under `folder` with its content: the outside must end as it began. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(folder, file)] = entry.isFile() ? readFileSync(file, "utf8") : "<dir>";
  }
  return files;
}

/** The calls raced against the swapper: each reaches through `swap` or `swap.txt`. */
const FORMS: { tool: string; input: Record<string, unknown> }[] = [
  { tool: "read_file", input: { path: "swap.txt" } },
  { tool: "read_file", input: { path: "swap/target.txt" } },
  { tool: "write_file", input: { path: "swap.txt", content: "written by the tool\n" } },
  { tool: "write_file", input: { path: "swap/written.txt", content: "written by the tool\n" } },
  { tool: "write_file", input: { path: "swap/deeper/written.txt", content: "x\n", append: true } },
  { tool: "list_dir", input: { path: "swap", recursive: true } },
  { tool: "search_files", input: { path: "swap", pattern: COMMON } },
  { tool: "search_files", input: { path: ".", pattern: COMMON } },
];

describe("file tools against a process that swaps names for symlinks meanwhile", () => {
  beforeEach(async () => {
    harness = new ToolHarness({
      permissions: { allow: ["read_file", "write_file", "list_dir", "search_files"] },
    });
    writeFileSync(path.join(harness.outside, "target.txt"), `${MARKER} ${COMMON}\n`);
    writeFileSync(path.join(harness.outside, `${MARKER}.txt`), `${MARKER} ${COMMON}\n`);
    mkdirSync(path.join(harness.outside, "deeper"));
    writeFileSync(path.join(harness.outside, "deeper", "inner.txt"), `${MARKER} ${COMMON}\n`);
    swapper = spawn(process.execPath, [SWAPPER, harness.workdir, harness.outside], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [chunk] = (await once(swapper.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    expect(chunk.toString()).toContain("ready");
  });

  afterEach(async () => {
    if (swapper.exitCode === null && swapper.signalCode === null) {
      const exited = once(swapper, "exit");
      swapper.kill("SIGKILL");
      await exited;
    }
    harness.dispose();
  });

  // CPU-bound (a swapper process races every call): on a loaded 2-core machine it takes minutes.
  it("never reads, lists or writes outside the workdir", { timeout: 150_000 }, async () => {
    const before = snapshot(harness.outside);
    const leaks: string[] = [];
    const succeeded = new Map<string, number>();
    let escapesRefused = 0;
    await Promise.all(
      FORMS.map(async ({ tool, input }) => {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const result = await harness.call(tool, input);
          if (result.output.includes(MARKER))
            leaks.push(`${tool} ${JSON.stringify(input)}: ${result.output}`);
          if (result.ok) succeeded.set(tool, (succeeded.get(tool) ?? 0) + 1);
          if (result.code === "PATH_ESCAPE") escapesRefused++;
        }
      }),
    );
    expect(swapper.exitCode).toBe(null);
    expect({ leaks: leaks.length, first: leaks.slice(0, 3) }).toEqual({ leaks: 0, first: [] });
    expect(snapshot(harness.outside)).toEqual(before);
    // The race ran both ways: symlinks that leave were met (and refused), and every tool also
    // worked inside while the names were real.
    expect(escapesRefused).toBeGreaterThan(0);
    for (const tool of ["read_file", "write_file", "list_dir", "search_files"]) {
      expect({ tool, succeeded: (succeeded.get(tool) ?? 0) > 0 }).toEqual({ tool, succeeded: true });
    }
  });
});
