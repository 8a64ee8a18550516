import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readlinkSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxSettingsSchema } from "../../src/config/sandbox-settings.js";
import { bubblewrapArguments } from "../../src/sandbox/bubblewrap-arguments.js";
import { pinResolutions } from "../../src/sandbox/cached-sandbox-mounts.js";
import { HeldBindSources } from "../../src/sandbox/held-bind-sources.js";
import { MARKERS, SandboxProject } from "./sandbox-project.js";

const SWAPPER = path.resolve(import.meta.dirname, "../fixtures/sandbox/link-swapper.py");
const STARTS = 60;

let project: SandboxProject;
let swapper: ChildProcess | undefined;

beforeAll(() => {
  project = new SandboxProject();
});

afterAll(() => {
  swapper?.kill("SIGKILL");
  project.dispose();
});

describe("a bind source swapped for a link while the sandbox starts", () => {
  it("never gets bubblewrap to bind what the link points to, across many starts", async () => {
    // `write: [shared/sub]` inside the agent's own workdir; another process swaps `sub` for a link
    // to data_dir (the vault key) and back, as fast as it can, while the agent's commands start.
    const shared = path.join(project.workdir, "shared");
    mkdirSync(path.join(shared, "sub"), { recursive: true });
    writeFileSync(path.join(shared, "sub", "vault.key"), "the-real-folder");
    symlinkSync(project.dataDirectory, path.join(shared, "sub.link"));
    swapper = spawn("python3", [SWAPPER, shared], { stdio: ["ignore", "pipe", "inherit"] });
    const [started] = (await once(swapper.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    expect(started.toString()).toContain("swapping");

    const outcomes = { real: 0, refused: 0, moved: 0, other: 0 };
    for (let start = 0; start < STARTS; start++) {
      const result = await project.shell(`cat ${path.join(shared, "sub", "vault.key")}`, {
        sandbox: { write: [path.join(shared, "sub")] },
      });
      expect(result.output).not.toContain(MARKERS.vaultKey);
      if (result.output.includes("the-real-folder")) outcomes.real += 1;
      // Refused by the daemon, or by bubblewrap: its own check, or a mount point gone meanwhile.
      else if (/Race condition|changed while|a link inside|bwrap: /.test(result.output))
        outcomes.refused += 1;
      // Started, but `sub` was renamed away meanwhile: the mount went with the folder.
      else if (result.output.includes("cat: ")) outcomes.moved += 1;
      else outcomes.other += 1;
    }
    expect(swapper.exitCode, "the swapper ran all along").toBeNull();
    swapper.kill("SIGKILL");
    // Some starts ran with the real folder; the rest were refused or found it renamed away. With
    // binds by path (bubblewrap without --bind-fd) some of them bound data_dir: the vault key.
    expect(outcomes.real, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.other, JSON.stringify(outcomes)).toBe(0);
  });

  it("leaves none of the held descriptors open inside: each would lead out through its `..`", async () => {
    const result = await project.shell("ls -l /proc/$$/fd", {
      sandbox: { write: [project.outside], read: [project.home] },
    });
    // The shell's descriptors: stdio, the daemon's pipes, and the one `ls` lists with; no folder.
    const targets = [...result.output.matchAll(/ -> (\/\S*)/g)].map((match) => match[1]);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => target !== "/dev/null" && !target?.startsWith("/proc/"))).toEqual([]);
  });

  it("binds the folder it walked to, though the path leads through a link when the layout is made", () => {
    const sub = path.join(project.workdir, "pinned", "sub");
    mkdirSync(sub, { recursive: true });
    const policy = project.host().policyFor({
      settings: { ...SandboxSettingsSchema.parse({}), write: [sub], unix_sockets: [] },
      workdir: project.workdir,
      owner: "the pinning test",
    });
    // The policy's layers worked out once already (the real paths policyFor found are used up):
    // the next working-out resolves every path again.
    bubblewrapArguments(policy, { read: [], write: [] });
    const held = new HeldBindSources("the pinning test", 4);
    try {
      const checked = policy.linkChecked as NonNullable<typeof policy.linkChecked>;
      pinResolutions(policy, held.walk(checked.paths, checked.folders));
      // Swapped after the walk, before the layout resolves the paths it binds.
      renameSync(sub, `${sub}.real`);
      symlinkSync(project.dataDirectory, sub);
      const args = bubblewrapArguments(policy, { read: [], write: [] }, held);
      const at = args.indexOf(sub);
      expect(args[at - 2]).toBe("--bind-fd");
      const descriptor = held.descriptors[Number(args[at - 1]) - 4] as number;
      expect(readlinkSync(`/proc/self/fd/${descriptor}`)).toBe(`${sub}.real`);
      expect(args.filter((argument) => argument.startsWith(project.dataDirectory))).toEqual([
        project.dataDirectory,
      ]); // only its hiding tmpfs
    } finally {
      held.close();
    }
  });
});
