import { randomUUID } from "node:crypto";
import os from "node:os";
import { prepareSandboxedChild } from "../sandbox/sandboxed-child.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { shellEnvironment } from "../secrets/child-environment.js";
import { PROCESS_MARKER_VARIABLE } from "./find-tree-members.js";
import type * as ExecaModule from "execa";
import { ProcessTree } from "./process-tree.js";

export interface TrackedProcessOptions {
  command: string;
  arguments: string[];
  workdir: string;
  /**
   * Where the child's environment starts from: `shell` — the shell tool's allow-list (PATH, HOME,
   * LANG, LC_*, TERM, TZ, TMPDIR), for shell calls and hooks; or the variables given (a CLI
   * worker's, from `cliEnvironment`). Never the daemon's whole environment.
   */
  baseEnvironment: "shell" | Record<string, string>;
  /** Added over the base environment (a call's secret variables, a CLI's configured env). */
  environment: Record<string, string>;
  /** The sandbox the child runs in; `mode: off` in it is the only way to run unsandboxed. */
  sandbox: SandboxPolicy;
  /**
   * The child's one deadline (execa's cancelSignal): the run's signal, merged with the child's own
   * timeout where it has one (`withDeadline`). Its reason comes back as the result's `cause`.
   */
  cancelSignal: AbortSignal;
  /** SIGTERM → SIGKILL delay, for execa and for the tree. */
  killGraceMilliseconds: number;
  /** Written to the child's stdin, which is then closed (a hook's JSON document); default: no stdin. */
  input?: string;
}

/** execa, once imported: a dynamic import of a loaded module still resolves it anew every time. */
let execaModule: Promise<typeof ExecaModule> | undefined;

/**
 * The one way agentd starts a child on an agent's behalf (shell tool, CLI worker, hooks): inside
 * its sandbox (bubblewrap, see src/sandbox), headless (stdin ignored unless `input` is given, output streamed, never
 * rejecting), as the leader of its own process group, marked so that every descendant can be
 * found. `endTree` ends the whole tree once, however often it is called. Rejects with
 * SANDBOX_UNAVAILABLE when the sandbox is asked for and cannot be set up: never runs unsandboxed.
 */
export async function startTrackedProcess(options: TrackedProcessOptions) {
  const marker = randomUUID();
  const sandboxed = options.sandbox.mode !== "off";
  const base =
    options.baseEnvironment === "shell"
      ? shellEnvironment(sandboxed ? "/tmp" : (process.env["TMPDIR"] ?? os.tmpdir()))
      : options.baseEnvironment;
  const prepared = await prepareSandboxedChild(options.sandbox, {
    command: options.command,
    arguments: options.arguments,
    workdir: options.workdir,
    environment: { ...base, ...options.environment, [PROCESS_MARKER_VARIABLE]: marker },
  });
  // Loaded with the first child process: a CLI start that runs none does not pay for execa.
  const { execa } = await (execaModule ??= import("execa"));
  const subprocess = execa(prepared.command, prepared.arguments, {
    cwd: prepared.workdir,
    env: prepared.environment,
    // Without this execa adds the daemon's whole environment back, secrets included.
    extendEnv: false,
    // From descriptor 3 on: what the sandbox passes to bubblewrap (its seccomp filter, the bridge's
    // channel). execa's types list descriptor numbers up to 9 only; any open one works (Node's spawn).
    stdio: [
      options.input === undefined ? "ignore" : "pipe",
      "pipe",
      "pipe",
      ...(prepared.extraStdio as ("pipe" | "ipc" | "ignore")[]),
    ],
    // The sandbox's listener handoff speaks Node's IPC as JSON lines (execa's default: advanced).
    serialization: "json",
    ...(options.input === undefined ? {} : { input: options.input }),
    buffer: false,
    detached: true,
    reject: false,
    cancelSignal: options.cancelSignal,
    forceKillAfterDelay: options.killGraceMilliseconds,
  });
  prepared.started(subprocess);
  const tree = subprocess.pid === undefined ? undefined : new ProcessTree(subprocess.pid, marker);
  // A sandboxed child's whole tree lives in its PID namespace, which the kernel empties when the
  // namespace's init ends: after bubblewrap's exit there is nothing to scan /proc for, on every call.
  // (bubblewrap exits as soon as its init reports the command's exit status, and the init exits
  // right after it: what is left in the namespace is killed by the kernel within moments of the
  // call's end, not later.) Only
  // after an exit of its own, though: bubblewrap binds the namespace's init to itself once the
  // sandbox is set up, and killed by a signal before that (a deadline, the OOM killer) it leaves
  // the init running, and the command it goes on to start.
  let namespaceGone = false;
  if (prepared.ownPidNamespace) {
    subprocess.once("exit", (_code, signal) => (namespaceGone = signal === null));
  }
  let ending: Promise<void> | undefined;
  const endTree = (): Promise<void> =>
    (ending ??= (
      namespaceGone
        ? Promise.resolve()
        : (tree?.terminate(options.killGraceMilliseconds) ?? Promise.resolve())
    ).finally(() => prepared.release()));
  void subprocess.then(() => prepared.release());
  return { subprocess, tree, endTree };
}
