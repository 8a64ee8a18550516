import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAgentFile, listAgentFiles, listPresetFiles } from "../../src/definitions/definition-files.js";
import { agentIdOf } from "../../src/definitions/agent-id.js";

describe("listing definition files", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "agentd-definition-files-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function write(relative: string): string {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "---\ndescription: x\n---\n");
    return file;
  }

  it("lists the .md files isAgentFile accepts, subfolders included, sorted; nothing hidden", async () => {
    const agents = path.join(root, ".claude", "agents");
    const wanted = [
      write(".claude/agents/zeta.md"),
      write(".claude/agents/alpha.md"),
      write(".claude/agents/team/beta.md"),
      write(".claude/agents/team/deep/gamma.md"),
    ];
    const unwanted = [
      write(".claude/agents/.swap.md"),
      write(".claude/agents/notes.txt"),
      write(".claude/agents/.git/hidden.md"),
      write(".claude/agents/team/.drafts/draft.md"),
      write(".claude/agents/readme.md.bak"),
    ];
    symlinkSync(wanted[0] as string, path.join(agents, "linked.md"));
    const listed = await listAgentFiles([agents]);
    const expected = [...wanted, path.join(agents, "linked.md")].sort();
    expect(listed).toEqual(expected);
    for (const file of listed) expect(isAgentFile(agents, file)).toBe(true);
    for (const file of unwanted) expect(isAgentFile(agents, file)).toBe(false);
  });

  it("lists a file once when two agent folders hold it, and nothing from a missing folder", async () => {
    const file = write("agents/one.md");
    const listed = await listAgentFiles([path.join(root, "agents"), root, path.join(root, "missing")]);
    expect(listed).toEqual([file]);
  });

  it("lists only the presets folder's own YAML files", async () => {
    const presets = path.join(root, "presets");
    const files = [write("presets/a.yaml"), write("presets/b.yml")];
    write("presets/.c.yaml");
    write("presets/sub/d.yaml");
    write("presets/e.md");
    expect(await listPresetFiles(presets)).toEqual(files);
  });
});

describe("agentIdOf", () => {
  it("is the file's base name without .md", () => {
    expect(agentIdOf("/agents/team/code-reviewer.md")).toBe("code-reviewer");
    expect(agentIdOf("/agents/plain")).toBe("plain");
    expect(agentIdOf("/agents/.md")).toBe(".md");
    expect(agentIdOf("/agents/a.md.md")).toBe("a-md");
    // Dots between name characters become -: opencode's `code.reviewer.md`.
    expect(agentIdOf("/agents/code.reviewer.md")).toBe("code-reviewer");
    expect(agentIdOf("/agents/.hidden.md")).toBe(".hidden");
    expect(agentIdOf("relative.md")).toBe("relative");
  });
});
