import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostExecutedPaths } from "../../src/sandbox/host-executed-paths.js";

const root = mkdtempSync(path.join(tmpdir(), "agentd-host-executed-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folderWith(name: string, files: string[]): string {
  const folder = path.join(root, name);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, file), "");
  }
  mkdirSync(folder, { recursive: true });
  return folder;
}

describe("host-executed paths of a writable folder", () => {
  it("finds the files that exist, and creates git's hooks folder where .git has none", () => {
    const folder = folderWith("repo", [
      ".git/HEAD",
      ".git/config",
      ".bashrc",
      ".vscode/tasks.json",
      ".vscode/mcp.json",
      ".gemini/policies/allow.toml",
      ".codex/config.toml",
      ".devcontainer/devcontainer.json",
      ".devcontainer/Dockerfile",
      "opencode.json",
      "notes.txt",
    ]);
    const found = hostExecutedPaths([folder]);
    expect(found.sort()).toEqual(
      [
        ".bashrc",
        ".codex/config.toml",
        ".devcontainer/devcontainer.json",
        ".gemini/policies",
        ".git/config",
        ".git/hooks",
        ".vscode/mcp.json",
        ".vscode/tasks.json",
        "opencode.json",
      ].map((name) => path.join(folder, name)),
    );
    expect(existsSync(path.join(folder, ".git", "hooks"))).toBe(true);
  });

  it("follows links as before and skips a dangling one", () => {
    const folder = folderWith("linked", ["real-profile"]);
    symlinkSync(path.join(folder, "real-profile"), path.join(folder, ".profile"));
    symlinkSync(path.join(folder, "missing"), path.join(folder, ".zshrc"));
    expect(hostExecutedPaths([folder])).toEqual([path.join(folder, ".profile")]);
  });

  it("finds them in a folder too big to list, in a CLI's config folder, and none in a missing one", () => {
    const big = folderWith("big", [
      ...Array.from({ length: 300 }, (_, index) => `file-${index}`),
      ".envrc",
      ".claude/hooks/pre.sh",
    ]);
    expect(hostExecutedPaths([big]).sort()).toEqual(
      [".claude/hooks", ".envrc"].map((name) => path.join(big, name)),
    );
    const cli = folderWith(".claude", ["settings.json", "plugins/x.json"]);
    expect(hostExecutedPaths([cli]).sort()).toEqual(
      ["plugins", "settings.json"].map((name) => path.join(cli, name)),
    );
    const gemini = folderWith(".gemini", ["policies/allow.toml", "notes.md"]);
    expect(hostExecutedPaths([gemini])).toEqual([path.join(gemini, "policies")]);
    const codex = folderWith(".codex", ["rules/default.rules", "sessions/x.jsonl"]);
    expect(hostExecutedPaths([codex])).toEqual([path.join(codex, "rules")]);
    expect(hostExecutedPaths([path.join(root, "absent")])).toEqual([]);
  });

  it("finds them in a folder whose entries take more room than one read of it takes", () => {
    // Long names: the folder's size passes 64 KiB on ext4, xfs and btrfs (read a batch at a time).
    const wide = folderWith("wide", [
      ...Array.from({ length: 800 }, (_, index) => `${"n".repeat(120)}-${index}`),
      ".npmrc",
      ".vscode/tasks.json",
    ]);
    expect(hostExecutedPaths([wide]).sort()).toEqual(
      [".npmrc", ".vscode/tasks.json"].map((name) => path.join(wide, name)),
    );
  });
});

describe("what a repository's config names", () => {
  it("finds the hooksPath folder and included files, quoted or not, and skips missing ones", () => {
    const folder = folderWith("configured", [
      ".git/HEAD",
      ".husky/pre-commit",
      "shared.gitconfig",
      "a b.inc",
    ]);
    writeFileSync(
      path.join(folder, ".git", "config"),
      '[core]\n\tHooksPath = ".husky" ; comment\n[include]\n\tpath = ../shared.gitconfig\n' +
        '[includeIf "gitdir:/x/"]\n\tpath = "../a b.inc"\n[include]\n\tpath = ../missing.inc\n' +
        "[alias]\n\tpath = ../notes.txt\n",
    );
    const found = hostExecutedPaths([folder]).filter((entry) => !entry.includes(`${path.sep}.git`));
    expect(found.sort()).toEqual(
      [".husky", "a b.inc", "shared.gitconfig"].map((name) => path.join(folder, name)),
    );
  });
});
