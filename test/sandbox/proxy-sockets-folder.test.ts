import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { handoffProgram } from "../../src/sandbox/listener-handoff.js";
import { SandboxProject } from "./sandbox-project.js";

/**
 * The folder of the node bridge's proxy sockets (`agentd-proxies-…` in the temporary folder) is
 * made only by a sandbox host that will use the node bridge (perl missing), and it is hidden in its
 * sandboxes. Every process that made a sandbox host used to leave one behind unless it exited
 * cleanly: a machine gathered over a thousand. The temporary folder here is one of the test's own.
 */
let project: SandboxProject;
let temporary: string;
const savedTemporary = process.env["TMPDIR"];
beforeAll(() => {
  project = new SandboxProject();
  temporary = path.join(project.root, "tmp");
  mkdirSync(temporary);
  process.env["TMPDIR"] = temporary;
});
afterAll(() => {
  if (savedTemporary === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = savedTemporary;
  project.dispose();
});

const proxyFolders = () => readdirSync(temporary).filter((entry) => entry.startsWith("agentd-proxies-"));

// First in this file: the folder is made once per process, and nothing before this made it.
it.skipIf(handoffProgram(process.env["PATH"] ?? "") === undefined)(
  "a host whose sandboxes hand their listener over (perl on PATH) makes no proxy folder",
  { timeout: 60_000 },
  async () => {
    const host = project.host();
    const result = await project.shell("echo ran", { sandbox: { network: ["example.com"] }, host });
    expect(result.output).toContain("ran");
    expect(proxyFolders()).toEqual([]);
  },
);

it(
  "with perl missing, the folder is made with the host, hidden in its sandboxes, and a dead process's is removed",
  { timeout: 60_000 },
  async () => {
    const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
    const deadPid = spawnSync("true").pid as number;
    const abandoned = `agentd-proxies-${namespace}-${deadPid}-abc123`;
    const living = `agentd-proxies-${namespace}-${process.ppid}-def456`;
    for (const folder of [abandoned, living]) mkdirSync(path.join(temporary, folder));
    const bin = path.join(project.root, "bin-without-perl");
    mkdirSync(bin);
    for (const program of ["bwrap", "bash"]) symlinkSync(`/usr/bin/${program}`, path.join(bin, program));
    const host = project.host({ ...process.env, HOME: project.home, PATH: bin });

    const made = proxyFolders().filter((entry) => entry !== living);
    expect(made).toEqual([expect.stringMatching(new RegExp(`^agentd-proxies-${namespace}-${process.pid}-`))]);
    expect(proxyFolders()).toContain(living);
    expect(proxyFolders()).not.toContain(abandoned);
    const marker = path.join(temporary, made[0] as string, "marker");
    writeFileSync(marker, "");
    const result = await project.shell(`[ -e ${marker} ] && echo SEEN || echo UNSEEN`, {
      sandbox: { network: ["example.com"], read: [temporary] },
      host,
    });
    expect(result.output).toContain("UNSEEN");
  },
);
