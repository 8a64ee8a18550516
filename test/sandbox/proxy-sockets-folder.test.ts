import { execFile, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { handoffProgram } from "../../src/sandbox/listener-handoff.js";

/**
 * The folder of the node bridge's proxy sockets (`agentd-proxies-…` in the temporary folder) is
 * made only by a sandbox host that will use the node bridge (perl missing), hidden in its
 * sandboxes, and removed when the process exits; making one removes those whose process is gone.
 * Every process that made a sandbox host used to leave one behind unless it exited cleanly: a
 * machine gathered over a thousand. Each case runs the built daemon code (`dist/`) in a process of
 * its own, with a temporary folder of its own: the folder is made once per process.
 */
const dist = path.join(import.meta.dirname, "..", "..", "dist");

let root: string | undefined;
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/**
 * Makes a sandbox host in a node process with `PATH`, runs one host-list shell call that says
 * whether a file put in the proxy folder (if there is one) shows in the sandbox, and exits.
 */
const HOST_PROCESS = `
import { readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
const [dist, project, workdir] = process.argv.slice(1);
const { SandboxHost } = await import(path.join(dist, "sandbox/sandbox-host.js"));
const { ConfigSchema } = await import(path.join(dist, "config/config-schema.js"));
const { runShellCommand } = await import(path.join(dist, "tools/builtin/run-shell-command.js"));
const config = { ...ConfigSchema.parse({}), data_dir: path.join(project, "data"), agents_dir: path.join(project, "agents") };
const host = new SandboxHost({ config });
const folders = readdirSync(os.tmpdir()).filter((entry) => entry.startsWith("agentd-proxies-"));
const own = folders.find((entry) => entry.includes("-" + process.pid + "-"));
const marker = path.join(os.tmpdir(), own ?? ".", "marker");
writeFileSync(marker, "");
const sandbox = host.policyFor({
  settings: { mode: "workspace-write", network: ["example.com"], read: [os.tmpdir()], write: [] },
  workdir,
  owner: "test",
});
const result = await runShellCommand({
  command: "[ -e " + marker + " ] && echo SEEN || echo UNSEEN",
  workdir, environment: {}, sandbox, timeoutMilliseconds: 30000, maxOutputBytes: 4096,
  signal: new AbortController().signal,
});
console.log(JSON.stringify({ folders, said: result.stdout.text(4096).trim(), exitCode: result.exitCode }));
`;

async function runHost(searchPath: string): Promise<{ folders: string[]; said: string; left: string[] }> {
  root = realpathSync(mkdtempSync("/var/tmp/agentd-proxy-folder-test-"));
  const temporary = path.join(root, "tmp");
  const workdir = path.join(root, ".agentd", "workspaces", "me");
  mkdirSync(temporary);
  mkdirSync(workdir, { recursive: true });
  abandon(temporary);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "-e", HOST_PROCESS, dist, root, workdir],
    { env: { ...process.env, TMPDIR: temporary, PATH: searchPath }, timeout: 60_000 },
  );
  const { folders, said } = JSON.parse(stdout) as { folders: string[]; said: string };
  return {
    folders,
    said,
    left: readdirSync(temporary).filter((entry) => entry.startsWith("agentd-proxies-")),
  };
}

const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
/** A folder left by a process that is gone, and one of a process that still runs (this one's parent). */
const ABANDONED = `agentd-proxies-${namespace}-${spawnSync("true").pid as number}-abc123`;
const LIVING = `agentd-proxies-${namespace}-${process.ppid}-def456`;
/** A link named as a dead process's folder, to a folder that is not one: never followed. */
const LINK = `agentd-proxies-${namespace}-${spawnSync("true").pid as number}-link00`;
function abandon(temporary: string): void {
  for (const folder of [ABANDONED, LIVING]) mkdirSync(path.join(temporary, folder));
  const elsewhere = path.join(temporary, "..", "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, "kept"), "");
  symlinkSync(elsewhere, path.join(temporary, LINK));
}

it.skipIf(handoffProgram(process.env["PATH"] ?? "") === undefined)(
  "a host whose sandboxes hand their listener over (perl on PATH) makes no proxy folder",
  { timeout: 60_000 },
  async () => {
    const { folders, left } = await runHost(process.env["PATH"] ?? "");
    expect(folders.filter((entry) => entry !== ABANDONED && entry !== LIVING && entry !== LINK)).toEqual([]);
    expect(left.sort()).toEqual([ABANDONED, LINK, LIVING].sort());
  },
);

it(
  "with perl missing, the folder is made with the host, hidden in its sandboxes, removed at exit, and a dead process's is removed",
  { timeout: 60_000 },
  async () => {
    const bin = realpathSync(mkdtempSync("/var/tmp/agentd-bin-without-perl-"));
    try {
      for (const program of ["bwrap", "bash"]) symlinkSync(`/usr/bin/${program}`, path.join(bin, program));
      const { folders, said, left } = await runHost(bin);
      const made = folders.filter((entry) => entry !== LIVING && entry !== LINK);
      expect(made).toEqual([expect.stringMatching(new RegExp(`^agentd-proxies-${namespace}-\\d+-`))]);
      expect(said).toBe("UNSEEN");
      expect(left.sort()).toEqual([LINK, LIVING].sort());
      expect(existsSync(path.join(root as string, "elsewhere", "kept"))).toBe(true);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  },
);
