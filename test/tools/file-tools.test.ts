import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../support/tool-harness.js";

const FILE_TOOLS = { allow: ["read_file", "write_file", "list_dir", "search_files"] };
const OUTSIDE_TEXT = "the outside secret text";

let harness: ToolHarness;

/** Every file under `folder` with its content, to prove a refused call changed nothing. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(folder, file)] = entry.isFile() ? readFileSync(file, "utf8") : "<dir>";
  }
  return files;
}

function setUpTree(): void {
  const { workdir, outside } = harness;
  writeFileSync(path.join(outside, "secret.txt"), OUTSIDE_TEXT);
  mkdirSync(path.join(workdir, "docs"));
  writeFileSync(path.join(workdir, "docs", "notes.md"), "# Notes\nfirst line\nsecond line\n");
  mkdirSync(path.join(workdir, "src"));
  writeFileSync(path.join(workdir, "src", "main.ts"), "export const answer = 42;\n");
  writeFileSync(path.join(workdir, "src", "readme.md"), "answer in prose\n");
  symlinkSync(path.join(outside, "secret.txt"), path.join(workdir, "link-file"));
  symlinkSync(outside, path.join(workdir, "link-dir"));
  symlinkSync(path.join(outside, "created-through-dangling.txt"), path.join(workdir, "dangling"));
  symlinkSync(path.join(workdir, "docs", "notes.md"), path.join(workdir, "inside-link"));
  symlinkSync(path.join(workdir, "docs"), path.join(workdir, "docs-link"));
}

describe("file tools: confinement to the workdir", () => {
  beforeEach(() => {
    harness = new ToolHarness({ permissions: FILE_TOOLS });
    setUpTree();
  });
  afterEach(() => harness.dispose());

  const escapes = (outside: string) => [
    "../outside/secret.txt",
    "a/../../outside/secret.txt",
    "docs/../../outside/secret.txt",
    path.join(outside, "secret.txt"),
    "link-file",
    "link-dir/secret.txt",
    "docs-link/../../outside/secret.txt",
  ];

  it("refuses every read that leaves the workdir with PATH_ESCAPE", async () => {
    for (const attempt of escapes(harness.outside)) {
      const result = await harness.call("read_file", { path: attempt });
      expect({ attempt, ok: result.ok, code: result.code }).toEqual({
        attempt,
        ok: false,
        code: "PATH_ESCAPE",
      });
      expect(result.output).not.toContain(OUTSIDE_TEXT);
    }
  });

  it("refuses every write that leaves the workdir and leaves the outside untouched", async () => {
    const before = snapshot(harness.outside);
    const attempts = [
      ...escapes(harness.outside),
      "../outside/new.txt",
      "link-dir/new.txt",
      "link-dir/deeper/new.txt",
      path.join(harness.outside, "new.txt"),
      "dangling",
    ];
    for (const attempt of attempts) {
      for (const append of [false, true]) {
        const result = await harness.call("write_file", { path: attempt, content: "PWNED", append });
        expect({ attempt, ok: result.ok, code: result.code }).toEqual({
          attempt,
          ok: false,
          code: "PATH_ESCAPE",
        });
      }
    }
    expect(snapshot(harness.outside)).toEqual(before);
  });

  it("refuses to list or search outside, and never follows a symlink that leaves", async () => {
    for (const attempt of ["..", "../outside", harness.outside, "link-dir", "docs/../.."]) {
      for (const tool of ["list_dir", "search_files"]) {
        const input = tool === "list_dir" ? { path: attempt } : { path: attempt, pattern: "secret" };
        const result = await harness.call(tool, input);
        expect({ tool, attempt, code: result.code }).toEqual({ tool, attempt, code: "PATH_ESCAPE" });
      }
    }
    const listing = await harness.call("list_dir", { recursive: true });
    expect(listing.output.split("\n").sort()).toEqual(
      ["docs/", "docs/notes.md", "docs-link@", "inside-link@", "src/", "src/main.ts", "src/readme.md"].sort(),
    );
    const search = await harness.call("search_files", { pattern: "secret" });
    expect(search.output).not.toContain(OUTSIDE_TEXT);
  });

  it("works through symlinks that stay inside, and with absolute paths inside", async () => {
    expect((await harness.call("read_file", { path: "inside-link" })).output).toContain("first line");
    expect((await harness.call("read_file", { path: "docs-link/notes.md" })).output).toContain("second line");
    const absolute = path.join(harness.workdir, "docs", "notes.md");
    expect(await harness.call("read_file", { path: absolute })).toMatchObject({ ok: true });
    const write = await harness.call("write_file", { path: "docs-link/new.md", content: "via link" });
    expect(write.ok).toBe(true);
    expect(readFileSync(path.join(harness.workdir, "docs", "new.md"), "utf8")).toBe("via link");
  });

  it("follows a workdir given as a symlink to where it points at each call, not where it pointed before", async () => {
    const first = path.join(harness.base, "first");
    const second = path.join(harness.base, "second");
    renameSync(harness.workdir, first);
    mkdirSync(second);
    writeFileSync(path.join(second, "notes.md"), "the second workdir\n");
    symlinkSync(first, harness.workdir);
    expect((await harness.call("read_file", { path: "docs/notes.md" })).output).toContain("second line");
    rmSync(harness.workdir);
    symlinkSync(second, harness.workdir);
    expect((await harness.call("read_file", { path: "notes.md" })).output).toBe("the second workdir");
    expect(await harness.call("read_file", { path: "docs/notes.md" })).toMatchObject({ ok: false });
    // An absolute path under the old target now leads outside the workdir.
    const old = path.join(first, "docs", "notes.md");
    expect(await harness.call("read_file", { path: old })).toMatchObject({ code: "PATH_ESCAPE" });
  });
});

describe("file tools: what they do", () => {
  beforeEach(() => {
    harness = new ToolHarness({ permissions: FILE_TOOLS });
    setUpTree();
  });
  afterEach(() => harness.dispose());

  it("reads a file, or the lines asked for, and says where it continues", async () => {
    const lines = Array.from({ length: 50 }, (_, index) => `line ${index + 1}`);
    writeFileSync(path.join(harness.workdir, "long.txt"), `${lines.join("\n")}\n`);

    expect((await harness.call("read_file", { path: "docs/notes.md" })).output).toBe(
      "# Notes\nfirst line\nsecond line",
    );
    const part = await harness.call("read_file", { path: "long.txt", offset: 10, limit: 3 });
    expect(part.output).toBe(
      "line 10\nline 11\nline 12\n[showing lines 10-12; the file continues: call read_file with offset=13]",
    );
    const missing = await harness.call("read_file", { path: "nope.txt" });
    expect(missing).toMatchObject({ ok: false, code: "TOOL_FAILED" });
  });

  it("says a binary file is binary instead of dumping its bytes", async () => {
    writeFileSync(path.join(harness.workdir, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const result = await harness.call("read_file", { path: "image.png" });
    expect(result).toMatchObject({ ok: true });
    expect(result.output).toBe('"image.png" is a binary file (8 bytes); its content is not shown');
  });

  it("reads a file whole whatever its size against the first read's 8 KiB and 64 KiB", async () => {
    // Lines of 10 bytes ("line 0001\n"): files ending just before, at and just past each boundary.
    for (const bytes of [8_190, 8_192, 8_200, 65_530, 65_540, 140_000]) {
      const lines = Array.from({ length: Math.floor(bytes / 10) }, (_, index) =>
        `line ${String(index + 1).padStart(4, "0")}`.slice(0, 9),
      );
      writeFileSync(path.join(harness.workdir, "sized.txt"), `${lines.join("\n")}\n`);
      // The output cap holds about 3,000 of them: the last 1,000 lines, read through all before.
      const offset = Math.max(1, lines.length - 999);
      const result = await harness.call("read_file", { path: "sized.txt", offset });
      expect(result).toMatchObject({ ok: true });
      expect(result.output.split("\n")).toEqual(lines.slice(offset - 1));
    }
  });

  it("sees a NUL byte anywhere in the first 8 KiB of a file bigger than that", async () => {
    const text = Buffer.alloc(20_000, "a");
    text[8_191] = 0;
    writeFileSync(path.join(harness.workdir, "late-nul.bin"), text);
    const result = await harness.call("read_file", { path: "late-nul.bin" });
    expect(result.output).toBe('"late-nul.bin" is a binary file (20000 bytes); its content is not shown');
  });

  it("refuses a FIFO instead of blocking on it", async () => {
    execFileSync("mkfifo", [path.join(harness.workdir, "pipe")]);
    expect(await harness.call("read_file", { path: "pipe" })).toMatchObject({
      ok: false,
      code: "TOOL_FAILED",
    });
    const search = await harness.call("search_files", { path: "pipe", pattern: "x" });
    expect(search).toMatchObject({ ok: false, code: "TOOL_FAILED" });
    for (const append of [false, true]) {
      const write = await harness.call("write_file", { path: "pipe", content: "x", append });
      expect(write).toMatchObject({ ok: false, code: "TOOL_FAILED" });
      expect(write.output).toContain("not a regular file");
    }
  });

  it("caps what it reads of a huge file by the output budget, without loading it whole", async () => {
    harness.dispose();
    harness = new ToolHarness({ permissions: FILE_TOOLS, settings: { max_output_bytes: 1_000 } });
    writeFileSync(path.join(harness.workdir, "one-line.txt"), "x".repeat(5_000_000));
    const result = await harness.call("read_file", { path: "one-line.txt" });
    expect(result.ok).toBe(true);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(1_200);
  });

  it("writes, appends, and creates missing folders and a missing workdir", async () => {
    rmSync(harness.workdir, { recursive: true });
    const created = await harness.call("write_file", { path: "out/deep/report.md", content: "one\n" });
    expect(created).toMatchObject({ ok: true, output: "created out/deep/report.md (4 bytes written)" });
    await harness.call("write_file", { path: "out/deep/report.md", content: "two\n", append: true });
    expect(readFileSync(path.join(harness.workdir, "out/deep/report.md"), "utf8")).toBe("one\ntwo\n");
    await harness.call("write_file", { path: "out/deep/report.md", content: "three\n" });
    expect(readFileSync(path.join(harness.workdir, "out/deep/report.md"), "utf8")).toBe("three\n");
  });

  it("lists a folder, and stops at max_entries", async () => {
    expect((await harness.call("list_dir", { path: "src" })).output).toBe("src/main.ts\nsrc/readme.md");
    const capped = await harness.call("list_dir", { recursive: true, max_entries: 2 });
    expect(capped.output).toBe(
      "docs/\ndocs-link@\n[stopped after 2 entries; list a sub-folder or raise max_entries]",
    );
  });

  it("searches by regex, by plain text when the pattern is no regex, and by file-name glob", async () => {
    writeFileSync(path.join(harness.workdir, "src", "call.ts"), "run(answer\n");
    const regex = await harness.call("search_files", { pattern: "answer\\s=\\s\\d+" });
    expect(regex.output).toBe("src/main.ts:1: export const answer = 42;");
    const plain = await harness.call("search_files", { pattern: "run(answer" });
    expect(plain.output).toBe("src/call.ts:1: run(answer");
    const globbed = await harness.call("search_files", { pattern: "answer", glob: "*.md" });
    expect(globbed.output).toBe("src/readme.md:1: answer in prose");
    const none = await harness.call("search_files", { pattern: "no such text anywhere" });
    expect(none.output).toBe('no match for "no such text anywhere"');
  });

  it("filters by the glob forms of bash: [ab], {1..3}, {a,b} and **", async () => {
    for (const name of ["a.txt", "b.txt", "c.txt", "part1.log", "part2.log", "part4.log"]) {
      writeFileSync(path.join(harness.workdir, "src", name), "needle\n");
    }
    const search = async (glob: string) =>
      (await harness.call("search_files", { pattern: "needle", glob })).output.split("\n").sort();
    expect(await search("[ab].txt")).toEqual(["src/a.txt:1: needle", "src/b.txt:1: needle"]);
    expect(await search("part{1..3}.log")).toEqual(["src/part1.log:1: needle", "src/part2.log:1: needle"]);
    expect(await search("src/**/{c,part4}.*")).toEqual(["src/c.txt:1: needle", "src/part4.log:1: needle"]);
  });
});

describe("file tools: permission subjects", () => {
  afterEach(() => harness.dispose());

  it("matches rules against the path as written and as resolved", async () => {
    harness = new ToolHarness({
      permissions: { allow: ["read_file", "write_file(*.md)"], deny: ["read_file(private/*)"] },
    });
    mkdirSync(path.join(harness.workdir, "private"));
    writeFileSync(path.join(harness.workdir, "private", "key"), "private key");
    symlinkSync(path.join(harness.workdir, "private"), path.join(harness.workdir, "alias"));

    expect(await harness.call("read_file", { path: "alias/key" })).toMatchObject({
      ok: false,
      code: "TOOL_DENIED",
    });
    expect(await harness.call("read_file", { path: "./private/key" })).toMatchObject({ code: "TOOL_DENIED" });
    expect(await harness.call("write_file", { path: "notes.md", content: "ok" })).toMatchObject({ ok: true });

    const unlisted = await harness.call("write_file", { path: "script.sh", content: "rm -rf /" });
    expect(unlisted).toMatchObject({ ok: false, code: "TOOL_DENIED" });
    expect(harness.approvalRequests.map((request) => request.tool)).toEqual(["write_file"]);
    expect(existsSync(path.join(harness.workdir, "script.sh"))).toBe(false);
  });
});
