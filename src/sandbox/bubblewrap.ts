import { accessSync, closeSync, constants, openSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";

/** Whether the sandbox can be set up on this machine, and if not, why and what to do. */
export type SandboxAvailability =
  | {
      available: true;
      bubblewrap: string;
      description: string;
      /** Whether it binds a held descriptor (`--bind-fd`, bubblewrap 0.10 and some distributions' builds). */
      bindsByDescriptor: boolean;
    }
  | { available: false; reason: string; hint: string };

const OPT_OUT =
  "or opt out with `sandbox: off` (config or agent file), knowing the agent can then read every secret the daemon can";

/** Probe results per bubblewrap path: whether namespaces work does not change while the daemon runs. */
const probes = new Map<string, SandboxAvailability>();

/**
 * bubblewrap as found on each search path, as perl is for the listener handoff: looked up once, not
 * in every folder of PATH for every sandboxed child. A search path without it is looked at again.
 */
const bubblewrapPaths = new Map<string, string>();

/**
 * Finds bubblewrap on `searchPath` (once per search path) and checks once (per path, cached) that
 * it can create the namespaces the sandbox needs. Never throws.
 */
export function sandboxAvailability(searchPath: string): SandboxAvailability {
  if (process.platform !== "linux") {
    return {
      available: false,
      reason: `the sandbox is implemented with Linux bubblewrap; ${process.platform} is not supported yet`,
      hint: `run agentd on Linux, ${OPT_OUT}`,
    };
  }
  const bubblewrap = bubblewrapPaths.get(searchPath) ?? findOnPath("bwrap", searchPath);
  if (bubblewrap === undefined) {
    return {
      available: false,
      reason: "bubblewrap (bwrap) is not installed or not on PATH",
      hint: `install it (Debian/Ubuntu: \`apt install bubblewrap\`; Fedora: \`dnf install bubblewrap\`), ${OPT_OUT}`,
    };
  }
  bubblewrapPaths.set(searchPath, bubblewrap);
  let probe = probes.get(bubblewrap);
  if (probe === undefined) {
    probe = probeBubblewrap(bubblewrap);
    probes.set(bubblewrap, probe);
  }
  return probe;
}

/** The bubblewrap to use, or SANDBOX_UNAVAILABLE saying what to install or how to opt out. */
export function requireBubblewrap(searchPath: string, owner: string): string {
  const availability = sandboxAvailability(searchPath);
  if (availability.available) return availability.bubblewrap;
  throw new AgentdError("SANDBOX_UNAVAILABLE", `cannot sandbox ${owner}: ${availability.reason}`, {
    hint: availability.hint,
  });
}

/** open(2)'s O_PATH (x86_64 and aarch64): the probe's descriptor of `/`. */
const O_PATH = 0o10000000;

/** Whether `bubblewrap` (found available) binds held descriptors: see HeldBindSources. */
export function bindsByDescriptor(bubblewrap: string): boolean {
  const probe = probes.get(bubblewrap);
  return probe?.available === true && probe.bindsByDescriptor;
}

function probeBubblewrap(bubblewrap: string): SandboxAvailability {
  // One start answers both questions when it can: the namespaces work, and so does --ro-bind-fd.
  const root = openSync("/", O_PATH);
  const run = (extra: string[]) =>
    spawnSync(
      bubblewrap,
      [
        ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", ...extra],
        ...["--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "--", "true"],
      ],
      {
        encoding: "utf8",
        timeout: 10_000,
        env: { PATH: "/usr/bin:/bin" },
        stdio: ["ignore", "pipe", "pipe", root],
      },
    );
  let result;
  let bindsHeld = true;
  try {
    result = run(["--ro-bind-fd", "3", "/tmp"]);
    // A start cut short (the timeout on a loaded machine, a signal) says nothing about the option:
    // taken as "no --bind-fd", it would bind by path for the daemon's whole life. Tried once more.
    if (cutShort(result)) result = run(["--ro-bind-fd", "3", "/tmp"]);
    // Only bubblewrap's own refusal (it exits with an error) means the option is missing.
    if (result.status !== 0 && !cutShort(result)) {
      bindsHeld = false;
      result = run([]);
    }
  } finally {
    closeSync(root);
  }
  if (result.status === 0) {
    const description = bindsHeld
      ? `bubblewrap (${bubblewrap})`
      : `bubblewrap (${bubblewrap}; without --bind-fd: binds by path, their sources checked just before, ` +
        `not held; bubblewrap 0.10 or later holds them)`;
    return { available: true, bubblewrap, description, bindsByDescriptor: bindsHeld };
  }
  const said = (result.stderr || result.error?.message || `exit ${String(result.status)}`).trim();
  return {
    available: false,
    reason: `bubblewrap cannot create namespaces here (${said})`,
    hint:
      "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 " +
      "an AppArmor profile for bwrap); in a container, start it with --security-opt seccomp=unconfined, " +
      "apparmor=unconfined and systempaths=unconfined; under systemd, drop ProtectKernelTunables= and " +
      `ProtectKernelLogs= (docs/deployment.md), ${OPT_OUT}`,
  };
}

/** Whether a probe's start was stopped before bubblewrap could answer (a timeout, a signal). */
function cutShort(result: { status: number | null; signal: NodeJS.Signals | null; error?: Error }): boolean {
  return result.status === null || result.signal !== null || result.error !== undefined;
}

/** The first executable `program` in the folders of `searchPath`. */
export function findOnPath(program: string, searchPath: string): string | undefined {
  for (const folder of searchPath.split(path.delimiter)) {
    if (folder === "") continue;
    const candidate = path.join(folder, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}
