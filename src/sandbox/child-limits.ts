import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxLimits } from "../config/sandbox-settings.js";
import type { ChildCommand } from "./sandboxed-child.js";

/** The OOM killer's score adjustment of every sandboxed process: chosen first, before the daemon. */
export const SANDBOX_OOM_SCORE_ADJUST = 1000;

/** Shells whose `-c` script can set the limits itself, with builtins: no extra exec on a call. */
const SHELLS = new Set(["bash", "sh", "dash"]);

/**
 * Shell builtins that bound the process they run in, and so everything it starts: the process
 * count as a hard limit (`ulimit -u` in bash, `-p` in dash; raising it back needs a capability
 * the sandbox drops), and an OOM score adjustment (a preference: a process may set it back down
 * to 0, never below). A hard limit already lower (systemd's LimitNPROC=) stays: `ulimit` cannot
 * raise it, and is quiet.
 */
export function limitsPreamble(limits: SandboxLimits): string {
  const processes = String(limits.processes);
  return (
    `ulimit -u ${processes} 2>/dev/null || ulimit -p ${processes} 2>/dev/null; ` +
    `echo ${String(SANDBOX_OOM_SCORE_ADJUST)} >/proc/self/oom_score_adj 2>/dev/null; `
  );
}

/**
 * Says, as bubblewrap does (sandbox-spawn-failure.ts), that the command cannot be started, before
 * `nice` or the shell would say it in their own words: callers tell a CLI that is not installed by
 * that line.
 */
const COMMAND_CHECK =
  'case $1 in */*) [ -x "$1" ] && [ ! -d "$1" ];; *) command -v "$1" >/dev/null;; esac || { ' +
  'case $1 in */*) [ -e "$1" ] && { echo "agentd sandbox: execvp $1: Permission denied" >&2; exit 126; };; esac; ' +
  'echo "agentd sandbox: execvp $1: No such file or directory" >&2; exit 127; }; ';

/**
 * The child with its limits applied inside the sandbox. A shell's `-c` script (the shell tool's
 * and hooks' `bash -c`) starts with the preamble, on its first line, so that its line numbers
 * stay, and no process is added to the call. Any other command (a CLI worker, an MCP server,
 * started far less often) runs through `sh -c '<preamble> exec nice -n <nice> "$@"'`: two small
 * execs at its start. `helperSetsPriority`: a helper the sandbox runs before the command (the
 * listener handoff's perl, the node bridge) sets the priority itself (sandboxPriority), so the
 * wrapper adds no `nice`. `priorityInside` is false when the priority is still to be lowered from
 * outside (`lowerPriority`): a shell's script where no helper runs.
 */
export function limitedChild(
  child: ChildCommand,
  limits: SandboxLimits,
  helperSetsPriority = false,
): { child: ChildCommand; priorityInside: boolean } {
  const preamble = limitsPreamble(limits);
  const [flag, script, ...rest] = child.arguments;
  if (SHELLS.has(path.basename(child.command)) && flag === "-c" && script !== undefined) {
    return {
      child: { ...child, arguments: ["-c", preamble + script, ...rest] },
      priorityInside: helperSetsPriority,
    };
  }
  const nice = String(limits.nice);
  const start =
    limits.nice === 0 || helperSetsPriority
      ? 'exec "$@"'
      : `command -v nice >/dev/null && exec nice -n ${nice} "$@"; exec "$@"`;
  return {
    child: {
      ...child,
      command: "/bin/sh",
      arguments: ["-c", preamble + COMMAND_CHECK + start, "sh", child.command, ...child.arguments],
    },
    priorityInside: true,
  };
}

/**
 * The CPU priority (a nice value) sandboxed processes run at: `limits.nice` steps below the
 * daemon's own, as `nice -n` inside does, at most 19.
 */
export function sandboxPriority(limits: SandboxLimits): number {
  return Math.min(19, os.getPriority() + limits.nice);
}

/**
 * Lowers the CPU priority (`nice` steps below the daemon's) of the sandbox's first process (bubblewrap) right after it started, and
 * of whatever it forked already (its namespace's init, the command's shell, still setting up):
 * every process they start inherits it, and none may raise it again (RLIMIT_NICE is 0 unless the
 * operator raised it). A handful of reads of /proc on each call; never throws (a process that is
 * gone already slows nothing down). Best effort: a process bubblewrap (or its init) is forking at
 * that moment is not yet among its children and keeps the old priority, about 1 call in 100 at a
 * load of 8 to 13 on 2 cores. A second pass a tick later missed as many (its own fork in flight)
 * for twice the reads, so there is one. Race-free would be bubblewrap's --info-fd and --block-fd
 * (its namespace's first process waits until the daemon lowered it): two more pipes a call, a
 * quarter more of the daemon's CPU per call. The process limit, set from inside, bounds a bomb.
 */
export function lowerPriority(pid: number | undefined, limits: SandboxLimits): void {
  if (pid === undefined || limits.nice === 0) return;
  const priority = sandboxPriority(limits);
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    try {
      os.setPriority(next, priority);
      const children = readFileSync(`/proc/${String(next)}/task/${String(next)}/children`, "utf8");
      for (const child of children.split(" ")) if (child !== "") pending.push(Number(child));
    } catch {
      // Exited already, or a kernel without the children file: its own priority is set.
    }
  }
}
