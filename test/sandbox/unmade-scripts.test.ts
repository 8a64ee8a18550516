import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { fileAccessOf } from "../../src/tools/workdir/file-access.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject;

beforeAll(async () => {
  project = new SandboxProject();
  // As the definitions' load does when some agent has a hook (src/definitions/command-grammar.ts).
  await loadBashParser();
});

afterAll(() => project.dispose());

/** Whether the file tools of agent `me` may make `relative` in its workdir, another agent's hooks being `hooks`. */
function mayCreate(
  hooks: { command: string; workdir: string }[],
  relative: string,
  home = project.home,
  searchPath = process.env["PATH"],
): boolean {
  const host = new SandboxHost({
    config: {
      ...ConfigSchema.parse({}),
      data_dir: project.dataDirectory,
      agents_dir: path.join(project.root, "agents"),
      presets_dir: path.join(project.root, "presets"),
    },
    configFile: project.configFile,
    environment: { ...process.env, HOME: home, PATH: searchPath },
    hookCommands: () => hooks,
  });
  const policy = host.policyFor({
    settings: { ...SandboxSettingsSchema.parse({}), unix_sockets: [] },
    workdir: project.workdir,
    owner: "the unmade-scripts test",
  });
  return fileAccessOf(policy).mayCreate(path.join(project.workdir, relative));
}

describe("a script another agent's hook runs that does not exist yet", () => {
  it("may not be made though the hook's folder is reached through a link and its folder is missing", () => {
    const linked = path.join(project.root, "linked-workdir");
    symlinkSync(project.workdir, linked);
    expect(mayCreate([{ command: "sh gates/gate.sh", workdir: project.workdir }], "gates/gate.sh")).toBe(
      false,
    );
    expect(mayCreate([{ command: "sh gates/gate.sh", workdir: linked }], "gates/gate.sh")).toBe(false);
    mkdirSync(path.join(project.workdir, "gates"));
    expect(mayCreate([{ command: "sh gates/gate.sh", workdir: linked }], "gates/gate.sh")).toBe(false);
    expect(mayCreate([{ command: "sh gates/gate.sh", workdir: linked }], "gates/other.sh")).toBe(true);
  });

  it("may not be made when the hook runs it through exec, env or timeout", () => {
    for (const command of [
      "exec ./audit.sh",
      "env MODE=ci ./audit.sh --strict",
      "/usr/bin/env bash audit.sh",
      "timeout 30 ./audit.sh",
      "nice -n 5 sh audit.sh",
    ])
      expect(mayCreate([{ command, workdir: project.workdir }], "audit.sh"), command).toBe(false);
  });
});

describe("a missing script named through what the shell expands or an option reads", () => {
  const cases: [string, string][] = [
    ["~/x.sh", "x.sh"],
    ["$HOME/x.sh --strict", "x.sh"],
    ["python3 -X dev gate.py", "gate.py"],
    ["bash -o posix gate.sh", "gate.sh"],
    ["node --require ./setup.js server.js", "setup.js"],
    ["node -r setup b.js", "setup"],
    ["sh -c 'cd gates && ./gate.sh'", "gates/gate.sh"],
    ["nohup stdbuf -oL ionice -c 3 setsid ./gate.sh", "gate.sh"],
    ["command ./gate.sh", "gate.sh"],
  ];
  it("may not be made by the file tools", () => {
    // HOME is the workdir here, so `~/x.sh` lands where the agent writes.
    for (const [command, relative] of cases)
      expect(mayCreate([{ command, workdir: project.workdir }], relative, project.workdir), command).toBe(
        false,
      );
    expect(mayCreate([{ command: "python3 -X dev gate.py", workdir: project.workdir }], "dev")).toBe(true);
  });

  it("whose folder is known only when the hook runs may not be made under that name anywhere", () => {
    const hooks = [
      { command: `"$CLAUDE_PROJECT_DIR"/hooks/gate.sh`, workdir: project.workdir },
      { command: "python3 ${TOOLS}/check-$MODE.py", workdir: project.workdir },
      { command: "ls gates | xargs -n1 sh", workdir: project.workdir },
    ];
    for (const relative of ["gate.sh", "deep/hooks/gate.sh", "check-ci.py", "gates"])
      expect(mayCreate(hooks, relative), relative).toBe(false);
    expect(mayCreate(hooks, "notes.md")).toBe(true);
  });

  it("may not be made in a shape the interpreter also runs: a folder in its place, a name Node completes", () => {
    const hooks = [
      { command: "python3 gates/gate.py", workdir: project.workdir },
      { command: "node tools/server", workdir: project.workdir },
      { command: "node -r setup tools/main.js", workdir: project.workdir },
    ];
    for (const relative of [
      "gates/gate.py/__main__.py",
      "gates/gate.py",
      "tools/server.js",
      "tools/server/index.js",
      "tools/server/package.json",
      "tools/main.js/index.js",
      "node_modules/setup.js",
      "node_modules/setup/index.js",
    ])
      expect(mayCreate(hooks, relative), relative).toBe(false);
    for (const relative of ["gates/other.py", "tools/client.js", "node_modules/other.js"])
      expect(mayCreate(hooks, relative), relative).toBe(true);
  });

  it("may not be made where a shell's start-up variable, a trap, a pipe, make, awk or sed takes commands from", () => {
    const cases: [string, string][] = [
      ["BASH_ENV=./hook-env bash -c 'check'", "hook-env"],
      ["env ENV=lib/rc.sh sh -c 'check'", "lib/rc.sh"],
      ["export BASH_ENV=$HOME/rc; bash -c check", "rc"],
      ["make lint", "Makefile"],
      ["make lint", "GNUmakefile"],
      ["make -C tools check", "tools/Makefile"],
      ["make --file=ci.mk check", "ci.mk"],
      ["awk -f gates/check.awk log.txt", "gates/check.awk"],
      ["sed -f gates/edit.sed -i notes.md", "gates/edit.sed"],
      ["trap 'sh gates/cleanup.sh' EXIT; check", "gates/cleanup.sh"],
      ["cat gates/gate | bash", "gates/gate"],
      ["cat gates/gate | python3 -", "elsewhere/gate"],
    ];
    for (const [command, relative] of cases)
      expect(mayCreate([{ command, workdir: project.workdir }], relative, project.workdir), command).toBe(
        false,
      );
    // make given its file reads no other; awk's data is not its program.
    expect(mayCreate([{ command: "make -f ci.mk check", workdir: project.workdir }], "Makefile")).toBe(true);
    expect(mayCreate([{ command: "awk -f check.awk log.txt", workdir: project.workdir }], "log.txt")).toBe(
      true,
    );
  });

  it("run by a bare name from a PATH folder the agent writes may not be made there", () => {
    const searchPath = `/usr/bin:${path.join(project.workdir, "bin")}`;
    const hooks = [{ command: "audit-tool --check && echo ok", workdir: project.workdir }];
    expect(mayCreate(hooks, "bin/audit-tool", project.home, searchPath)).toBe(false);
    expect(mayCreate(hooks, "bin/other-tool", project.home, searchPath)).toBe(true);
    expect(mayCreate(hooks, "audit-tool", project.home, searchPath)).toBe(true);
    // bash looks a script it does not find in its folder up on PATH too.
    const bashHooks = [{ command: "bash audit.sh", workdir: project.workdir }];
    expect(mayCreate(bashHooks, "bin/audit.sh", project.home, searchPath)).toBe(false);
  });
});
