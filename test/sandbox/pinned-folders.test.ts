import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { projectLayout } from "./project-layout.js";
import { SandboxProject } from "./sandbox-project.js";

// A read-only file the host runs later (git's config, a CLI's settings) is a mount point in the
// sandbox; the folder that holds it must not be renamed away and made anew around it.

let project: SandboxProject;
afterEach(() => project.dispose());

const ORIGINAL = "original-host-file-5e2a";

/** Each folder class of host-executed files, with one file in it, and a top-level file. */
const PROTECTED_FILES = [
  ".git/config",
  ".claude/settings.json",
  ".vscode/tasks.json",
  ".gemini/settings.json",
  ".codex/config.toml",
  ".devcontainer/devcontainer.json",
  ".cursor/mcp.json",
  ".config/git/config",
  ".envrc",
];

const git = (command: string) => `git -c user.email=a@b -c user.name=a -c init.defaultBranch=main ${command}`;

/** Writes each of `files` under `folder` with ORIGINAL; `.git` made by git init first. */
function plant(folder: string, files: readonly string[]): void {
  execFileSync("git", ["init", "-q", folder]);
  for (const file of files) {
    const full = path.join(folder, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, `# ${ORIGINAL}\n`);
  }
}

/** The agent's attempt on `file` (relative): its folders renamed or removed, a new one in their place. */
function replaceAround(file: string): string {
  const folders: string[] = [];
  for (let folder = path.dirname(file); folder !== "."; folder = path.dirname(folder)) folders.push(folder);
  const attempts = folders.flatMap((folder) => [
    `mv ${folder} ${folder}.old`,
    `rmdir ${folder}`,
    `rm -rf ${folder}`,
  ]);
  if (folders.length === 0) attempts.push(`mv ${file} ${file}.old`, `rm -f ${file}`);
  attempts.push(`mkdir -p ${path.dirname(file)} && echo planted > ${file}`);
  return attempts.map((attempt) => `${attempt} 2>&1`).join("; ");
}

describe("the folder of a file the host runs later", () => {
  it("cannot be renamed or removed from inside, and the files under it stay writable", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    plant(root, PROTECTED_FILES);
    const result = await project.shell(
      `${PROTECTED_FILES.map(replaceAround).join("; ")}; ` +
        `echo note > .claude/notes.md && echo note > .vscode/notes.md && echo WRITABLE`,
      { host, workdir: root },
    );
    expect(result.output).toContain("Device or resource busy");
    expect(result.output).toContain("WRITABLE");
    for (const file of PROTECTED_FILES) {
      expect(readFileSync(path.join(root, file), "utf8"), file).toBe(`# ${ORIGINAL}\n`);
      expect(existsSync(path.join(root, `${file.split("/")[0]}.old`)), file).toBe(false);
    }
    expect(readFileSync(path.join(root, ".claude", "notes.md"), "utf8")).toBe("note\n");
  });

  it("cannot be renamed away with a folder above a write: path inside the workdir", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    const inner = path.join(root, "vendor", "library");
    plant(inner, [".claude/settings.json"]);
    const configBefore = readFileSync(path.join(inner, ".git", "config"), "utf8");
    const result = await project.shell(
      `mv vendor vendor.old 2>&1; mv vendor/library vendor/library.old 2>&1; ` +
        `mkdir -p vendor/library/.git vendor/library/.claude; echo planted > vendor/library/.git/config; ` +
        `echo planted > vendor/library/.claude/settings.json; echo made > vendor/library/made.txt && echo WRITABLE`,
      { host, workdir: root, sandbox: { write: [inner] } },
    );
    expect(result.output).toContain("Device or resource busy");
    expect(result.output).toContain("WRITABLE");
    expect(readFileSync(path.join(inner, ".git", "config"), "utf8")).toBe(configBefore);
    expect(readFileSync(path.join(inner, ".claude", "settings.json"), "utf8")).toBe(`# ${ORIGINAL}\n`);
    expect(existsSync(path.join(root, "vendor.old"))).toBe(false);
    expect(readFileSync(path.join(inner, "made.txt"), "utf8")).toBe("made\n");
  });

  it("leaves git working: a commit in the pinned repository, a new repository inside it", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    plant(root, []);
    const result = await project.shell(
      `echo made > made.txt && ${git("add made.txt")} && ${git("commit -qm made")} && ` +
        `mkdir nested && cd nested && ${git("init -q")} && echo inner > inner.txt && ` +
        `${git("add inner.txt")} && ${git("commit -qm inner")} && echo COMMITTED`,
      { host, workdir: root },
    );
    expect(result.output).toContain("COMMITTED");
    const log = (folder: string) =>
      execFileSync("git", ["-C", folder, "log", "--format=%s"], { encoding: "utf8" }).trim();
    expect(log(root)).toBe("made");
    expect(log(path.join(root, "nested"))).toBe("inner");
  });
});
