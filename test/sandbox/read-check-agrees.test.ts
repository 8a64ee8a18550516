import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
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

  it.skipIf(!existsSync("/etc/resolv.conf"))(
    "shows resolv.conf inside a hidden socket place, as the sandbox binds it, and hides the rest",
    () => {
      // The folder resolv.conf really lies in made a socket place (as systemd-resolved's is):
      // the sandbox hides it and binds resolv.conf alone read-only over it.
      const resolver = realpathSync("/etc/resolv.conf");
      const place = path.dirname(resolver);
      project = new SandboxProject();
      const host = project.host({ ...process.env, HOME: project.home, WAYLAND_DISPLAY: place });
      const policy = host.policyFor({
        settings: { ...SandboxSettingsSchema.parse({}), unix_sockets: [] },
        workdir: project.workdir,
        owner: 'agent "me"',
      });
      const beside = readdirSync(place)
        .map((name) => path.join(place, name))
        .filter((entry) => entry !== resolver)
        .slice(0, 5);
      const shows = fileAccessOf(policy).shows;
      const full = cachedSandboxMounts(policy);
      expect(policy.systemRead).toEqual([resolver]);
      expect(layeredAccess(full, resolver)).toBe("read-only");
      expect(shows(resolver)).toBe(true);
      for (const entry of [place, ...beside]) {
        expect(layeredAccess(full, entry), entry).toBe("hidden");
        expect(shows(entry), entry).toBe(false);
      }
    },
  );
});
