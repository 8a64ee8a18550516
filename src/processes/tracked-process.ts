import { randomUUID } from "node:crypto";
import { execa } from "execa";
import { childEnvironment } from "../secrets/child-environment.js";
import { PROCESS_MARKER_VARIABLE, ProcessTree } from "./process-tree.js";

export interface TrackedProcessOptions {
  command: string;
  arguments: string[];
  workdir: string;
  /** Over the daemon's environment, which is passed without its secrets. */
  environment: Record<string, string>;
  /** Cancels the child (execa's cancelSignal). */
  cancelSignal: AbortSignal;
  /** SIGTERM → SIGKILL delay, for execa and for the tree. */
  killGraceMilliseconds: number;
  /** execa's own timeout, when the caller wants one. */
  timeoutMilliseconds?: number;
}

/**
 * Starts a child headless (stdin ignored, output streamed, never rejecting) as the leader of its
 * own process group, marked so that every descendant can be found, with the daemon's environment
 * minus its secrets. `endTree` ends the whole tree once, however often it is called: the shell
 * tool and the CLI worker share this start, and differ only in how they watch the child.
 */
export function startTrackedProcess(options: TrackedProcessOptions) {
  const marker = randomUUID();
  const subprocess = execa(options.command, options.arguments, {
    cwd: options.workdir,
    env: { ...childEnvironment(), ...options.environment, [PROCESS_MARKER_VARIABLE]: marker },
    // Without this execa adds the daemon's whole environment back, secrets included.
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    detached: true,
    reject: false,
    cancelSignal: options.cancelSignal,
    ...(options.timeoutMilliseconds === undefined ? {} : { timeout: options.timeoutMilliseconds }),
    forceKillAfterDelay: options.killGraceMilliseconds,
  });
  const tree = subprocess.pid === undefined ? undefined : new ProcessTree(subprocess.pid, marker);
  let ending: Promise<void> | undefined;
  const endTree = (): Promise<void> =>
    (ending ??= tree?.terminate(options.killGraceMilliseconds) ?? Promise.resolve());
  return { subprocess, tree, endTree };
}
