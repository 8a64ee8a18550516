import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxSettingsSchema, mergeSandboxSettings } from "../../src/config/sandbox-settings.js";
import type { PreparedChild } from "../../src/sandbox/sandboxed-child.js";
import type { SandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import { SandboxProject } from "./sandbox-project.js";
import { NOBODY, projectForNobody, startAsNobody as startSandboxedAsNobody } from "./sandboxed-as-nobody.js";

/**
 * A hostile page's resource bomb takes down only its own call: every sandboxed process is the OOM
 * killer's first choice, runs at a lower CPU priority, and may have at most `limits.processes`
 * processes at once. Bombs here are bounded (a loop that stops at 200 forks) and run as `nobody`:
 * the kernel exempts root, which runs these tests, from the process limit.
 */
let project: SandboxProject | undefined;
const started: { child: ChildProcess; prepared: PreparedChild }[] = [];
afterEach(async () => {
  for (const { child, prepared } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      // bubblewrap, by its pid: its namespace (every process of the bomb) dies with it.
      process.kill(child.pid, "SIGKILL");
      await once(child, "exit");
    }
    await prepared.release();
  }
  project?.dispose();
  project = undefined;
});

/** Config's sandbox with these limits over the defaults. */
function settingsWith(limits: Record<string, number>) {
  return {
    ...SandboxSettingsSchema.parse({}),
    limits: { processes: 1024, nice: 10, ...limits },
    unix_sockets: [],
  };
}

function policyFor(sandboxProject: SandboxProject, limits: Record<string, number>, owner: string) {
  return sandboxProject.host().policyFor({
    settings: settingsWith(limits),
    workdir: sandboxProject.workdir,
    owner,
  });
}

/** Starts `command` in the sandbox as `nobody`; killed after the test if it still runs. */
async function startAsNobody(policy: SandboxPolicy, command: string, args: string[]) {
  const launched = await startSandboxedAsNobody(policy, command, args);
  started.push({ child: launched.child, prepared: launched.prepared });
  return launched;
}

/** A bounded fork bomb: 200 forks that each sleep, the count of those the kernel refused, then a wait. */
const BOUNDED_BOMB =
  'my ($made, $refused, $why) = (0, 0, ""); for (1 .. 200) { my $pid = fork; ' +
  'if (!defined $pid) { $refused++; $why = "$!"; next } if ($pid == 0) { sleep 60; exit 0 } $made++ } ' +
  '$| = 1; print "forked $made, refused $refused: $why\\n"; sleep 60;';

describe("a sandboxed call's resources", () => {
  it("is the OOM killer's first choice under the process limit, the daemon's own unchanged", async () => {
    project = new SandboxProject();
    const daemonScore = readFileSync("/proc/self/oom_score_adj", "utf8");
    const daemonPriority = os.getPriority();
    const probe = "cat /proc/self/oom_score_adj; ulimit -Hu";
    for (const sandbox of [undefined, { network: ["example.com"] }]) {
      const result = await project.shell(probe, sandbox === undefined ? {} : { sandbox });
      expect(result.output, JSON.stringify(sandbox)).toMatch(/^exit code 0\nstdout:\n1000\n1024\n/);
    }
    expect(readFileSync("/proc/self/oom_score_adj", "utf8")).toBe(daemonScore);
    expect(os.getPriority()).toBe(daemonPriority);
  });

  it("runs a host-list call at the lower priority from its start, set by perl or the node bridge, once", async () => {
    project = projectForNobody();
    const expected = String(Math.min(19, os.getPriority() + 10));
    // Field 19 of /proc/<pid>/stat is the nice value: of bash itself, of a command it starts at once.
    const probe = 'read -r -a stat </proc/$$/stat; echo "${stat[18]}"; cut -d" " -f19 /proc/self/stat';
    const sandbox = { network: ["example.com"] };
    const handedOver = await project.shell(probe, { sandbox });
    expect(handedOver.output).toMatch(new RegExp(`^exit code 0\nstdout:\n${expected}\n${expected}\n`));
    const bin = path.join(project.root, "bin-without-perl");
    mkdirSync(bin);
    for (const program of ["bwrap", "bash", "cut"])
      symlinkSync(`/usr/bin/${program}`, path.join(bin, program));
    const host = project.host({ ...process.env, HOME: project.home, PATH: bin });
    const bridged = await project.shell(probe, { sandbox, host });
    expect(bridged.output).toMatch(new RegExp(`^exit code 0\nstdout:\n${expected}\n${expected}\n`));
    // A command that is not a shell (a CLI worker, an MCP server) is not lowered twice: by the
    // helper, then by `nice`.
    const policy = project.host().policyFor({
      settings: { ...settingsWith({}), network: ["example.com"] },
      workdir: project.workdir,
      owner: 'MCP server "bridged"',
    });
    const cli = await startAsNobody(policy, "perl", [
      "-e",
      'open my $s, "<", "/proc/self/stat"; print((split / /, <$s>)[18], "\\n")',
    ]);
    expect(await cli.waitFor(/\n/)).toBe(`${expected}\n`);
  });

  it("an agent file may lower its limits, never raise them", async () => {
    project = new SandboxProject();
    const raised = await project.shell("ulimit -Hu", { sandbox: { limits: { processes: 100_000 } } });
    expect(raised.output).toMatch(/^exit code 0\nstdout:\n1024\n/);
    const lowered = await project.shell("ulimit -Hu", { sandbox: { limits: { processes: 64 } } });
    expect(lowered.output).toMatch(/^exit code 0\nstdout:\n64\n/);
    const config = settingsWith({ processes: 512, nice: 10 });
    expect(mergeSandboxSettings(config, { limits: { processes: 4096, nice: 0 } }, "/").limits).toEqual({
      processes: 512,
      nice: 10,
    });
    expect(mergeSandboxSettings(config, { limits: { processes: 100, nice: 19 } }, "/").limits).toEqual({
      processes: 100,
      nice: 19,
    });
  });

  it("bounds a CLI worker or MCP server too (a command that is not a shell)", async () => {
    project = projectForNobody();
    const policy = policyFor(project, { processes: 64 }, 'MCP server "limits"');
    // Field 19 of /proc/<pid>/stat is the nice value (the command name, field 2, has no spaces here).
    const { ended } = await startAsNobody(policy, "perl", [
      "-e",
      'open my $s, "<", "/proc/self/stat"; print((split / /, <$s>)[18], "\\n"); exec "cat", "/proc/self/oom_score_adj", "/proc/self/limits"',
    ]);
    const output = await ended;
    expect(output).toMatch(/^10\n1000\n/);
    expect(output).toMatch(/^Max processes\s+64\s+64\s+processes/m);
  });

  it("refuses a fork bomb's forks past the limit while the daemon and another agent go on", async () => {
    project = projectForNobody();
    const bomb = await startAsNobody(policyFor(project, { processes: 64 }, 'agent "bomb"'), "bash", [
      "-c",
      `exec perl -e '${BOUNDED_BOMB}'`,
    ]);
    const report = await bomb.waitFor(/forked \d+, refused \d+/);
    const [, made, refused] = /forked (\d+), refused (\d+): (.*)/.exec(report) ?? [];
    // The call sees its own forks fail, and says why.
    expect(Number(refused), report).toBeGreaterThan(100);
    expect(Number(made), report).toBeLessThan(64);
    expect(report).toMatch(/Resource temporarily unavailable/);
    // While the bomb holds all it may: another agent's sandboxed call (the same user) runs...
    const other = await startAsNobody(policyFor(project, { processes: 64 }, 'agent "other"'), "bash", [
      "-c",
      "for i in 1 2 3 4 5 6 7 8; do sleep 0 & done; wait; echo done",
    ]);
    expect(await other.ended).toBe("done\n");
    // ...and so does the daemon's own child, outside any sandbox, as the same user.
    const daemonChild = spawn("/bin/echo", ["alive"], { uid: NOBODY, gid: NOBODY });
    let said = "";
    daemonChild.stdout.on("data", (chunk: Buffer) => (said += chunk.toString("utf8")));
    await once(daemonChild, "close");
    expect(said).toBe("alive\n");
    expect(bomb.child.exitCode).toBeNull();
  });
});
