import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { sandboxMounts } from "../../src/sandbox/sandbox-mounts.js";
import { projectLayout } from "./project-layout.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject;
afterEach(() => project.dispose());

const HOOK = "#!/bin/sh\nexit 0\n";
const INCLUDED = "[user]\n\tname = someone\n";

/**
 * A repository whose read-only `.git/config` names files in the workdir that git runs or reads as
 * config: `core.hooksPath = .husky` (as husky sets it) and `include.path` of a project file. Git
 * runs those hooks at the person's next commit, outside any sandbox, so they are as protected as
 * `.git/hooks` is.
 */
function repository(root: string): void {
  execFileSync("git", ["init", "-q", root]);
  execFileSync("git", ["-C", root, "config", "core.hooksPath", ".husky"]);
  execFileSync("git", ["-C", root, "config", "include.path", "../project.gitconfig"]);
  mkdirSync(path.join(root, ".husky"));
  writeFileSync(path.join(root, ".husky", "pre-commit"), HOOK);
  writeFileSync(path.join(root, "project.gitconfig"), INCLUDED);
}

describe("files the repository's git config names", () => {
  it("keeps the core.hooksPath folder and included config files read-only, by shell and write_file", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    repository(root);
    const plantedHook = "#!/bin/sh\ntouch /var/tmp/agentd-pwned\n";
    const plantedConfig = "[core]\n\tfsmonitor = touch /var/tmp/agentd-pwned\n";
    await project.shell(
      `printf '${plantedHook.replace(/\n/g, "\\n")}' > .husky/pre-commit; ` +
        `printf '${plantedHook.replace(/\n/g, "\\n")}' > .husky/post-commit; ` +
        `printf '${plantedConfig.replace(/\n/g, "\\n").replace(/\t/g, "\\t")}' >> project.gitconfig; ` +
        `mv .husky .husky.old; mkdir .husky; echo x > .husky/pre-commit`,
      { host, workdir: root },
    );
    await project.call(
      "write_file",
      { path: ".husky/pre-commit", content: plantedHook },
      { host, workdir: root },
    );
    await project.call(
      "write_file",
      { path: "project.gitconfig", content: plantedConfig },
      { host, workdir: root },
    );
    expect(readFileSync(path.join(root, ".husky", "pre-commit"), "utf8")).toBe(HOOK);
    expect(readFileSync(path.join(root, "project.gitconfig"), "utf8")).toBe(INCLUDED);
    expect(() => readFileSync(path.join(root, ".husky", "post-commit"))).toThrow();
  });

  it("keeps the .git file of a workdir that is a worktree read-only, so git is not pointed at a config the agent wrote", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    const main = path.join(project.outside, "main");
    execFileSync("git", ["init", "-q", main]);
    execFileSync("git", [
      "-C",
      main,
      "-c",
      "user.email=a@b",
      "-c",
      "user.name=a",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "x",
    ]);
    execFileSync("git", ["-C", main, "worktree", "add", "-q", path.join(root, "tree")]);
    const pointer = readFileSync(path.join(root, "tree", ".git"), "utf8");
    await project.shell(
      `mkdir -p fake && cp -r ${main}/.git/. fake/; printf '[core]\\n\\tfsmonitor = touch /var/tmp/agentd-pwned\\n' >> fake/config; ` +
        `echo "gitdir: fake" > .git`,
      { host, workdir: path.join(root, "tree") },
    );
    await project.call(
      "write_file",
      { path: ".git", content: "gitdir: fake\n" },
      { host, workdir: path.join(root, "tree") },
    );
    expect(readFileSync(path.join(root, "tree", ".git"), "utf8")).toBe(pointer);
  });
});

describe("what an operator's config names less plainly", () => {
  const PLANTED_HOOK = "#!/bin/sh\\ntouch /var/tmp/agentd-pwned\\n";

  it("keeps the hooks folder that an included project config sets read-only", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    // A project shares its hooks in a committed config each clone includes (`git config
    // include.path ../.gitconfig`): the hooks folder is named there, not in .git/config.
    execFileSync("git", ["init", "-q", root]);
    execFileSync("git", ["-C", root, "config", "include.path", "../shared/project.gitconfig"]);
    mkdirSync(path.join(root, "shared", "nested"), { recursive: true });
    writeFileSync(
      path.join(root, "shared", "project.gitconfig"),
      "[include]\n\tpath = nested/hooks.gitconfig\n",
    );
    writeFileSync(
      path.join(root, "shared", "nested", "hooks.gitconfig"),
      "[core]\n\thooksPath = .githooks\n",
    );
    mkdirSync(path.join(root, ".githooks"));
    writeFileSync(path.join(root, ".githooks", "pre-commit"), HOOK);
    const result = await project.shell(
      `printf '${PLANTED_HOOK}' > .githooks/pre-commit 2>&1; printf '[core]\\n\\thooksPath = x\\n' >> shared/nested/hooks.gitconfig 2>&1; echo DONE`,
      { host, workdir: root },
    );
    expect(result.output).toContain("DONE");
    expect(readFileSync(path.join(root, ".githooks", "pre-commit"), "utf8")).toBe(HOOK);
    expect(readFileSync(path.join(root, "shared", "nested", "hooks.gitconfig"), "utf8")).not.toContain("= x");
  });

  it("keeps an included file read-only after many that do not exist here, and one on continued lines", async () => {
    project = new SandboxProject();
    const { host, root } = projectLayout(project);
    execFileSync("git", ["init", "-q", root]);
    // Per-checkout includes for other machines (missing here) come first in the operator's config.
    const missing = Array.from(
      { length: 20 },
      (_, index) =>
        `[includeIf "gitdir:/elsewhere/${String(index)}/"]\n\tpath = ../missing-${String(index)}.gitconfig\n`,
    ).join("");
    const config = readFileSync(path.join(root, ".git", "config"), "utf8");
    writeFileSync(
      path.join(root, ".git", "config"),
      `${config}${missing}[include]\n\tpath = ../project.gitconfig\n[include]\r\n\tpath = ../con\\\r\ntinued.gitconfig\r\n`,
    );
    writeFileSync(path.join(root, "project.gitconfig"), INCLUDED);
    writeFileSync(path.join(root, "continued.gitconfig"), INCLUDED);
    expect(execFileSync("git", ["-C", root, "config", "--get-all", "include.path"]).toString()).toContain(
      "../continued.gitconfig",
    );
    const planted = "[core]\\n\\tfsmonitor = touch /var/tmp/agentd-pwned\\n";
    const result = await project.shell(
      `printf '${planted}' >> project.gitconfig 2>&1; printf '${planted}' >> continued.gitconfig 2>&1; echo DONE`,
      { host, workdir: root },
    );
    expect(result.output).toContain("DONE");
    expect(readFileSync(path.join(root, "project.gitconfig"), "utf8")).toBe(INCLUDED);
    expect(readFileSync(path.join(root, "continued.gitconfig"), "utf8")).toBe(INCLUDED);
  });
});

describe("a config that names more files than a hand-written one", () => {
  /** The sandbox of a shell call of agent `me` in its default workspace, as the daemon makes it. */
  const policyOfMe = () =>
    project.host().policyFor({
      settings: SandboxSettingsSchema.parse({}),
      workdir: project.workdir,
      owner: "agent me",
    });

  /** A repository in the agent's workdir whose config includes `names` (relative to `.git`), each made. */
  function namingRepository(workdir: string, names: string[]): void {
    mkdirSync(path.join(workdir, ".git"), { recursive: true });
    writeFileSync(path.join(workdir, ".git", "HEAD"), "ref: refs/heads/main\n");
    for (const name of names) {
      const file = path.join(workdir, ".git", name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, INCLUDED);
    }
    writeFileSync(
      path.join(workdir, ".git", "config"),
      names.map((name) => `[include]\n\tpath = ${name}\n`).join(""),
    );
  }

  it("costs the daemon a bounded number of binds, however many it names (one an agent wrote)", async () => {
    project = new SandboxProject();
    // Thousands of included files: each used to become a bind, and the layers' cost grew with the
    // square of their number (seconds of the daemon's event loop per call, then bubblewrap refused
    // "Exceeded maximum number of arguments").
    namingRepository(
      project.workdir,
      Array.from({ length: 3000 }, (_, index) => `../included/${String(index)}`),
    );
    const result = await project.shell("echo ran; ls .git/../included | wc -l");
    expect(result).toMatchObject({ ok: true });
    expect(result.output).toContain("ran\n3000\n");
    expect(sandboxMounts(policyOfMe()).length).toBeLessThan(200);
  });

  it("keeps a file named deep inside the workdir read-only by a folder above it", async () => {
    project = new SandboxProject();
    const deep = `../${Array.from({ length: 300 }, () => "d").join("/")}/deep.gitconfig`;
    namingRepository(project.workdir, [deep]);
    const result = await project.shell(
      `echo '[core] fsmonitor = touch /var/tmp/agentd-pwned' >> .git/${deep} 2>&1; echo DONE`,
    );
    expect(result.output).toContain("DONE");
    expect(readFileSync(path.join(project.workdir, ".git", deep), "utf8")).toBe(INCLUDED);
    expect(sandboxMounts(policyOfMe()).length).toBeLessThan(200);
  });
});
