import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { memoryFile } from "../../src/memory/file-memory-store.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { accessOf, sandboxMounts } from "../../src/sandbox/sandbox-mounts.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../src/config/sandbox-settings.js";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A project whose data_dir holds an agent's and a shared memory file, and the daemon's sandbox on it. */
function projectWithMemories(dataFolder: string) {
  root = mkdtempSync(path.join(realpathSync("/var/tmp"), "agentd-memory-sandbox-"));
  const dataDirectory = path.join(root, dataFolder);
  const files = [
    memoryFile(dataDirectory, { kind: "agent", agent: "notes" }),
    memoryFile(dataDirectory, { kind: "shared", scope: "team" }),
  ];
  for (const file of files) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "a note\n");
  }
  const config = {
    ...ConfigSchema.parse({}),
    data_dir: dataDirectory,
    agents_dir: path.join(root, "agents"),
    presets_dir: path.join(root, "presets"),
  };
  return { files, dataDirectory, host: new SandboxHost({ config }) };
}

describe("memory files in the sandbox", () => {
  it.each([
    ["a workdir holding data_dir", "data", "."],
    ["a workdir inside data_dir's parent, data_dir nested deeper", "state/data", "."],
    ["the default workspace", "data", ".agentd/workspaces/notes"],
  ])(
    "are hidden from %s, whatever read/write paths or mode the agent names",
    (_name, dataFolder, workdirPath) => {
      const { files, dataDirectory, host } = projectWithMemories(dataFolder);
      const workdir = path.join(root, workdirPath);
      mkdirSync(workdir, { recursive: true });
      const named = [
        path.join(dataDirectory, "memory"),
        path.dirname(files[0] as string),
        files[1] as string,
      ];
      for (const mode of ["workspace-write", "read-only"] as const) {
        const policy = host.policyFor({
          settings: {
            mode,
            network: "none",
            read: named,
            write: named,
            unix_sockets: [],
            limits: DEFAULT_SANDBOX_LIMITS,
          },
          workdir,
          owner: 'agent "notes"',
        });
        const mounts = sandboxMounts(policy);
        for (const file of files) expect(accessOf(mounts, file), `${mode} ${file}`).toBe("hidden");
      }
    },
  );
});
