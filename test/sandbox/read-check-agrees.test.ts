import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { cachedSandboxMounts, layeredAccess } from "../../src/sandbox/cached-sandbox-mounts.js";
import { fileAccessOf } from "../../src/tools/workdir/file-access.js";
import { SandboxProject } from "./sandbox-project.js";

let project: SandboxProject | undefined;
afterEach(() => {
  project?.dispose();
  project = undefined;
});

/**
 * The file tools' read check leaves the protected paths out unless a path is hidden without them
 * (001538b): it must show exactly what the sandbox's full layers show, for the project's workdir,
 * and for a workdir that holds the whole project (its data_dir, vault, home, config folder, other
 * workspaces, agents folder and hook script inside it), with `read` entries into hidden folders.
 */
describe("the file tools' read check", () => {
  it("shows what the sandbox shows and hides what it hides, path by path", () => {
    project = new SandboxProject();
    const root = project.root;
    for (const file of ["hooks/check.sh", ".env", "sub/.env", "agents/.env", "home/.config/tool/.env"]) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), "x");
    }
    const host = project.host();
    const everyPath = [
      root,
      ...[
        ".env",
        "sub/.env",
        "sub",
        "etc",
        "etc/config.yaml",
        "data",
        "data/vault.key",
        "data/vault.json",
        "data/runs/r_1.json",
        ".agentd/workspaces/other/notes.txt",
        ".agentd/workspaces/me",
        "home/.ssh/id_ed25519",
        "home/.config/tool/settings",
        "home/.config/tool/.env",
        "agents",
        "agents/me.md",
        "agents/.env",
        "hooks/check.sh",
        "outside",
      ].map((relative) => path.join(root, relative)),
      "/run/user",
      "/etc/hostname",
    ];
    for (const workdir of [project.workdir, root]) {
      for (const read of [[], [path.join(project.home, ".config/tool")], [project.dataDirectory]]) {
        const policy = host.policyFor({
          settings: { ...SandboxSettingsSchema.parse({}), read, unix_sockets: [] },
          workdir,
          owner: 'agent "me"',
          hookCommands: [`bash ${path.join(root, "hooks/check.sh")}`],
        });
        const shows = fileAccessOf(policy).shows;
        const full = cachedSandboxMounts(policy);
        for (const entry of everyPath) {
          expect(shows(entry), `${entry} (workdir ${workdir}, read ${read.join()})`).toBe(
            layeredAccess(full, entry) !== "hidden",
          );
        }
      }
    }
  });
});
