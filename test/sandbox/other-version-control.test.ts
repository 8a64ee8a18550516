import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

// Git is not the only version control whose repository config runs programs at the operator's next
// command there: Mercurial's `.hg/hgrc` (hooks such as `pre-status`, extensions loaded from a Python
// file) and Jujutsu's `.jj/repo/config.toml` (its pager, diff and merge tools).

let project: SandboxProject;
afterEach(() => project.dispose());

const ORIGINAL = "# original-repository-file-2b7d\n";
const HOOK = "[hooks]\\npre-status = touch /var/tmp/agentd-hg-pwned\\n";

/** Writes `files` (relative to the agent's workdir) with ORIGINAL, their folders made first. */
function plant(files: readonly string[]): void {
  for (const file of files) {
    const full = path.join(project.workdir, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, ORIGINAL);
  }
}

const read = (file: string) => readFileSync(path.join(project.workdir, file), "utf8");

describe("a Mercurial checkout as the agent's workdir", () => {
  it("keeps .hg/hgrc and .hg/requires read-only, and .hg in its place", async () => {
    project = new SandboxProject();
    plant([".hg/hgrc", ".hg/requires", ".hg/store/00changelog.i"]);
    const result = await project.shell(
      [
        `printf '${HOOK}' >> .hg/hgrc`,
        // A shared repository reads the hgrc of the one `sharedpath` names: one the agent wrote.
        "printf 'shared\\n' >> .hg/requires",
        "mkdir -p elsewhere/.hg && printf '" + HOOK + "' > elsewhere/.hg/hgrc",
        'printf "$PWD/elsewhere/.hg" > .hg/sharedpath',
        "echo kept > .hg/store/data-file && echo WRITABLE",
        "mv .hg/hgrc .hg/hgrc.old",
        "mv .hg .hg.old",
        "rm -rf .hg",
      ]
        .map((attempt) => `${attempt} 2>&1`)
        .join("; "),
    );
    expect(result.output).toContain("WRITABLE");
    const written = await project.call("write_file", { path: ".hg/hgrc", content: "[hooks]\n" });
    expect(written).toMatchObject({ ok: false });
    expect(read(".hg/hgrc")).toBe(ORIGINAL);
    expect(read(".hg/requires")).toBe(ORIGINAL);
    expect(existsSync(path.join(project.workdir, ".hg.old"))).toBe(false);
    expect(existsSync(path.join(project.workdir, ".hg/hgrc.old"))).toBe(false);
  });

  it("gives a repository without an hgrc (hg init's) an empty one that no command can fill", async () => {
    project = new SandboxProject();
    plant([".hg/requires", ".hg/store/00changelog.i"]);
    const result = await project.shell(`printf '${HOOK}' > .hg/hgrc 2>&1; cat .hg/hgrc; echo DONE`);
    expect(result.output).toContain("DONE");
    expect(read(".hg/hgrc")).toBe("");
  });

  it("makes no hgrc through a .hg that is a link", async () => {
    project = new SandboxProject();
    const target = path.join(project.outside, "repo");
    mkdirSync(target, { recursive: true });
    writeFileSync(path.join(target, "requires"), ORIGINAL);
    await project.shell(`ln -s ${target} .hg; echo DONE`);
    await project.shell("echo again");
    expect(existsSync(path.join(target, "hgrc"))).toBe(false);
  });
});

describe("a shared Mercurial checkout as the agent's workdir", () => {
  it("keeps .hg/sharedpath read-only and gives it an hgrc-not-shared no command can fill", async () => {
    project = new SandboxProject();
    // `hg share` leaves `shared` in requires and the source's .hg in sharedpath; every hg command
    // reads .hg/hgrc, then .hg/hgrc-not-shared (made by no one), and a share the source's hgrc.
    plant([".hg/hgrc", ".hg/requires", ".hg/sharedpath", "source/.hg/requires"]);
    const result = await project.shell(
      [
        `printf '${HOOK}' > .hg/hgrc-not-shared`,
        "mkdir -p elsewhere/.hg && printf '" + HOOK + "' > elsewhere/.hg/hgrc",
        'printf "$PWD/elsewhere/.hg" > .hg/sharedpath',
        "mv .hg/sharedpath .hg/sharedpath.old",
        "echo DONE",
      ]
        .map((attempt) => `${attempt} 2>&1`)
        .join("; "),
    );
    expect(result.output).toContain("DONE");
    expect(read(".hg/hgrc-not-shared")).toBe("");
    expect(read(".hg/sharedpath")).toBe(ORIGINAL);
    expect(existsSync(path.join(project.workdir, ".hg/sharedpath.old"))).toBe(false);
  });
});

describe("a Sapling checkout as the agent's workdir", () => {
  it("keeps .sl/config and .sl/requires read-only, and gives a repository without one an empty one", async () => {
    project = new SandboxProject();
    plant([".sl/config", ".sl/requires", "fresh/.sl/requires"]);
    const result = await project.shell(
      [
        `printf '${HOOK}' >> .sl/config`,
        "printf 'shared\\n' >> .sl/requires",
        `printf '${HOOK}' > fresh/.sl/config`,
        "mv .sl .sl.old",
        "echo DONE",
      ]
        .map((attempt) => `${attempt} 2>&1`)
        .join("; "),
      { sandbox: { write: [path.join(project.workdir, "fresh")] } },
    );
    expect(result.output).toContain("DONE");
    expect(read(".sl/config")).toBe(ORIGINAL);
    expect(read(".sl/requires")).toBe(ORIGINAL);
    expect(read("fresh/.sl/config")).toBe("");
    expect(existsSync(path.join(project.workdir, ".sl.old"))).toBe(false);
  });
});

describe("a Jujutsu checkout as the agent's workdir", () => {
  it("keeps .jj/repo/config.toml and .jj/workspace-config.toml read-only, and a workspace's .jj/repo pointer too", async () => {
    project = new SandboxProject();
    plant([".jj/repo/config.toml", ".jj/workspace-config.toml", ".jj/repo/op_store/x", "second/.jj/repo"]);
    const result = await project.shell(
      [
        `printf '[ui]\\npager = "sh -c touch /var/tmp/agentd-jj-pwned"\\n' >> .jj/repo/config.toml`,
        `printf '[ui]\\npager = "sh -c touch /var/tmp/agentd-jj-pwned"\\n' >> .jj/workspace-config.toml`,
        "mv .jj .jj.old",
        "mv .jj/repo .jj/repo.old",
        'printf "$PWD/elsewhere" > second/.jj/repo',
        "echo kept > .jj/repo/op_store/y && echo WRITABLE",
      ]
        .map((attempt) => `${attempt} 2>&1`)
        .join("; "),
      { sandbox: { write: [path.join(project.workdir, "second")] } },
    );
    expect(result.output).toContain("WRITABLE");
    expect(read(".jj/repo/config.toml")).toBe(ORIGINAL);
    expect(read(".jj/workspace-config.toml")).toBe(ORIGINAL);
    expect(read("second/.jj/repo")).toBe(ORIGINAL);
    expect(existsSync(path.join(project.workdir, ".jj.old"))).toBe(false);
    expect(read(".jj/repo/op_store/y")).toBe("kept\n");
  });
});
