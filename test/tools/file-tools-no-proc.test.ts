import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

/** The built tools, as the daemon loads them (run `npm run build` first). */
const BUILT = path.resolve(import.meta.dirname, "../../dist/tools/builtin");

/** Calls each file tool once and prints `tool code message` per line. */
const SCRIPT = `
const workdir = process.argv[1];
const context = {
  workdir,
  sandbox: { mode: "off" },
  signal: new AbortController().signal,
  settings: { max_output_bytes: 4000, shell_timeout: 5000 },
  pathAllowed: () => true,
  redactPiece: (text) => text,
};
const calls = [
  ["read-file-tool.js", "readFileTool", { path: "notes.md" }],
  ["write-file-tool.js", "writeFileTool", { path: "new.md", content: "x" }],
  ["list-dir-tool.js", "listDirTool", {}],
  ["search-files-tool.js", "searchFilesTool", { pattern: "x" }],
];
for (const [file, name, input] of calls) {
  const tool = (await import(${JSON.stringify(BUILT)} + "/" + file))[name];
  try {
    const result = await tool.run(input, context);
    console.log(name, "answered", JSON.stringify(result));
  } catch (error) {
    console.log(name, error.code, error.message);
  }
}
`;

let folder: string;
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe("file tools where /proc/self/fd is missing", () => {
  it("refuse with a clear error instead of opening by name", async () => {
    folder = mkdtempSync(path.join(tmpdir(), "agentd-no-proc-"));
    const workdir = path.join(folder, "work");
    mkdirSync(workdir);
    writeFileSync(path.join(workdir, "notes.md"), "notes\n");
    // The same machine with an empty /proc: what a system without it looks like to the tools.
    const { stdout } = await promisify(execFile)("bwrap", [
      "--bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--tmpfs",
      "/proc",
      process.execPath,
      "--input-type=module",
      "-e",
      SCRIPT,
      workdir,
    ]);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).toMatch(/^\w+ TOOL_FAILED the file tools need \/proc\/self\/fd, which this system lacks$/);
    }
    expect(existsSync(path.join(workdir, "new.md"))).toBe(false);
  });
});
