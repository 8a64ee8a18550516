import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { fileAccessOf } from "../../src/tools/workdir/file-access.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject;

beforeAll(() => {
  project = new SandboxProject();
});

afterAll(() => project.dispose());

/** Whether the file tools of agent `me` may make `relative` in its workdir, another agent's hooks being `hooks`. */
function mayCreate(hooks: { command: string; workdir: string }[], relative: string): boolean {
  const host = new SandboxHost({
    config: {
      ...ConfigSchema.parse({}),
      data_dir: project.dataDirectory,
      agents_dir: path.join(project.root, "agents"),
      presets_dir: path.join(project.root, "presets"),
    },
    configFile: project.configFile,
    environment: { ...process.env, HOME: project.home },
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
