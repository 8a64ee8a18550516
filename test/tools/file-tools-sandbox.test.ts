import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { accessOf, sandboxMounts } from "../../src/sandbox/sandbox-mounts.js";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { ToolHarness } from "../support/tool-harness.js";

const FILE_TOOLS = { allow: ["read_file", "write_file", "list_dir", "search_files"] };
const DEFINITION = "---\ndescription: a protected agent\n---\nDo the task.\n";
const HIDDEN_TEXT = "API_KEY=hidden-by-the-sandbox";

let harness: ToolHarness;

afterEach(() => harness.dispose());

/**
 * A workdir that holds definitions, as a project agent's does: `agents/` protected (read-only),
 * `.env` and `private/` hidden, the way the daemon's policy lists them.
 */
function protectedProject(mode: "workspace-write" | "off" = "workspace-write"): void {
  harness = new ToolHarness({
    permissions: FILE_TOOLS,
    ...(mode === "off" ? { sandbox: "off" } : {}),
    adjustPolicy: (policy: SandboxPolicy) => ({
      ...policy,
      protected: [...policy.protected, path.join(policy.workdir, "agents")],
      protectedHidden: [
        ...policy.protectedHidden,
        path.join(policy.workdir, ".env"),
        path.join(policy.workdir, "private"),
      ],
    }),
  });
  const { workdir } = harness;
  mkdirSync(path.join(workdir, "agents"));
  writeFileSync(path.join(workdir, "agents", "helper.md"), DEFINITION);
  writeFileSync(path.join(workdir, ".env"), `${HIDDEN_TEXT}\n`);
  mkdirSync(path.join(workdir, "private"));
  writeFileSync(path.join(workdir, "private", "key.txt"), `${HIDDEN_TEXT}\n`);
  writeFileSync(path.join(workdir, "notes.md"), "API notes\n");
}

describe("file tools: the agent's sandbox applies to them", () => {
  it("write_file refuses everything in mode read-only; reading still works", async () => {
    harness = new ToolHarness({ permissions: FILE_TOOLS, sandbox: { mode: "read-only" } });
    writeFileSync(path.join(harness.workdir, "notes.md"), "kept\n");
    const attempts = [
      { path: "notes.md", content: "changed" },
      { path: "notes.md", content: "more", append: true },
      { path: "new.md", content: "new" },
      { path: "folder/deeper/new.md", content: "new" },
    ];
    for (const attempt of attempts) {
      const result = await harness.call("write_file", attempt);
      expect({ attempt, ok: result.ok, code: result.code }).toEqual({
        attempt,
        ok: false,
        code: "TOOL_DENIED",
      });
      expect(result.output).toContain("read-only");
    }
    expect(readFileSync(path.join(harness.workdir, "notes.md"), "utf8")).toBe("kept\n");
    expect(existsSync(path.join(harness.workdir, "new.md"))).toBe(false);
    expect(existsSync(path.join(harness.workdir, "folder"))).toBe(false);
    expect(await harness.call("read_file", { path: "notes.md" })).toMatchObject({ ok: true, output: "kept" });
    expect(await harness.call("list_dir", {})).toMatchObject({ ok: true, output: "notes.md" });
  });

  it("refuses to change a protected definition inside a writable workdir, by any name", async () => {
    protectedProject();
    const helper = path.join(harness.workdir, "agents", "helper.md");
    symlinkSync(helper, path.join(harness.workdir, "alias.md"));
    symlinkSync(path.join(harness.workdir, "agents"), path.join(harness.workdir, "agents-link"));
    // A hard link made by a sandboxed command: the same file under a writable name.
    linkSync(helper, path.join(harness.workdir, "hard-link.md"));
    const attempts = [
      { path: "agents/helper.md", content: "PWNED" },
      { path: "agents/helper.md", content: "PWNED", append: true },
      { path: "agents/new.md", content: "PWNED" },
      { path: "agents/sub/new.md", content: "PWNED" },
      { path: "alias.md", content: "PWNED" },
      { path: "agents-link/helper.md", content: "PWNED" },
      { path: "hard-link.md", content: "PWNED" },
    ];
    for (const attempt of attempts) {
      const result = await harness.call("write_file", attempt);
      expect({ attempt, ok: result.ok, code: result.code }).toEqual({
        attempt,
        ok: false,
        code: "TOOL_DENIED",
      });
    }
    expect(readFileSync(helper, "utf8")).toBe(DEFINITION);
    expect(existsSync(path.join(harness.workdir, "agents", "new.md"))).toBe(false);
    expect(existsSync(path.join(harness.workdir, "agents", "sub"))).toBe(false);
    // Reading a definition is allowed (the sandbox shows it read-only), and the rest is writable.
    expect(await harness.call("read_file", { path: "alias.md" })).toMatchObject({ ok: true });
    expect(await harness.call("write_file", { path: "notes.md", content: "new notes" })).toMatchObject({
      ok: true,
    });
  });

  it("neither reads, lists, searches nor writes what the sandbox hides inside the workdir", async () => {
    protectedProject();
    symlinkSync(path.join(harness.workdir, ".env"), path.join(harness.workdir, "env-link"));
    symlinkSync(path.join(harness.workdir, "private"), path.join(harness.workdir, "private-link"));
    for (const attempt of [".env", "env-link", "private/key.txt", "private-link/key.txt"]) {
      const result = await harness.call("read_file", { path: attempt });
      expect({ attempt, code: result.code }).toEqual({ attempt, code: "TOOL_DENIED" });
      expect(result.output).not.toContain(HIDDEN_TEXT);
    }
    for (const attempt of ["private", "private-link"]) {
      const listing = await harness.call("list_dir", { path: attempt });
      expect({ attempt, code: listing.code }).toEqual({ attempt, code: "TOOL_DENIED" });
    }
    const listing = await harness.call("list_dir", { recursive: true });
    expect(listing.output.split("\n").sort()).toEqual(["agents/", "agents/helper.md", "notes.md"]);
    const search = await harness.call("search_files", { pattern: "API" });
    expect(search.output).toBe("notes.md:1: API notes");
    for (const attempt of [".env", "env-link", "private/new.txt"]) {
      const result = await harness.call("write_file", { path: attempt, content: "PWNED" });
      expect({ attempt, code: result.code }).toEqual({ attempt, code: "TOOL_DENIED" });
    }
    expect(readFileSync(path.join(harness.workdir, ".env"), "utf8")).toBe(`${HIDDEN_TEXT}\n`);
    expect(existsSync(path.join(harness.workdir, "private", "new.txt"))).toBe(false);
  });

  it("with mode off only the workdir fence applies", async () => {
    protectedProject("off");
    expect((await harness.call("read_file", { path: ".env" })).output).toBe(HIDDEN_TEXT);
    expect(await harness.call("write_file", { path: "agents/new.md", content: "ok" })).toMatchObject({
      ok: true,
    });
    expect(await harness.call("read_file", { path: "../outside/x" })).toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("reads, lists and searches what a protected folder shows of a hidden one, as the sandbox does", async () => {
    // A protected folder bound read-only over everything shows the host's files inside it, those
    // of a hidden folder too: the file tools show what a sandboxed command sees, no less.
    let adjusted: SandboxPolicy | undefined;
    harness = new ToolHarness({
      permissions: FILE_TOOLS,
      adjustPolicy: (policy: SandboxPolicy) => {
        const hiddenFolder = path.join(policy.workdir, "shared", "other");
        adjusted = {
          ...policy,
          hidden: [...policy.hidden, hiddenFolder],
          alwaysHidden: [...policy.alwaysHidden, hiddenFolder],
          protected: [...policy.protected, path.join(policy.workdir, "shared")],
        };
        return adjusted;
      },
    });
    mkdirSync(path.join(harness.workdir, "shared", "other"), { recursive: true });
    writeFileSync(path.join(harness.workdir, "shared", "other", "note.md"), "shown read-only\n");
    expect(await harness.call("read_file", { path: "shared/other/note.md" })).toMatchObject({
      ok: true,
      output: "shown read-only",
    });
    const listing = await harness.call("list_dir", { path: "shared", recursive: true });
    expect(listing.output.split("\n").sort()).toEqual(["shared/other/", "shared/other/note.md"]);
    expect(await harness.call("write_file", { path: "shared/other/note.md", content: "x" })).toMatchObject({
      ok: false,
      code: "TOOL_DENIED",
    });
    const policy = adjusted as SandboxPolicy;
    const note = path.join(policy.workdir, "shared", "other", "note.md");
    expect(accessOf(sandboxMounts(policy), note)).toBe("read-only");
  });
});
