import { accessSync, constants } from "node:fs";
import path from "node:path";
import { startTrackedProcess } from "../../processes/tracked-process.js";
import { isWithin } from "../../util/path-within.js";
import { type AbortEnding, abortEndingOf } from "../../run-vocabulary/abort-ending.js";
import type { SandboxPolicy } from "../../sandbox/sandbox-policy.js";
import { CappedCollector } from "./capped-collector.js";

/** SIGTERM → SIGKILL delay when a command is stopped or times out. */
const KILL_GRACE_MILLISECONDS = 2_000;

/**
 * How long output may still arrive once the shell has exited and its tree is ended: a process that
 * escaped the tree (`setsid env -i …`) may hold stdout open for as long as it runs.
 */
const PIPE_GRACE_MILLISECONDS = 500;

export interface ShellCommandOptions {
  command: string;
  workdir: string;
  /** Added to the allow-listed environment (secret references); never logged. */
  environment: Record<string, string>;
  /** The agent's sandbox; the command runs inside it (or fails with SANDBOX_UNAVAILABLE). */
  sandbox: SandboxPolicy;
  /** Bytes kept of stdout, and of stderr. */
  maxOutputBytes: number;
  /** The call's one deadline: the run's signal merged with the call's timeout (`withDeadline`). */
  signal: AbortSignal;
  /** Written to the command's stdin (a hook's JSON document); default: stdin ignored. */
  input?: string;
}

/** How a command ended. */
export interface ShellCommandResult {
  exitCode: number | undefined;
  /** The signal that ended the shell, when one did. */
  signalName: string | undefined;
  /** Why the command was cancelled (the run ended, or the call's deadline passed), when it was. */
  ending: AbortEnding | undefined;
  stdout: CappedCollector;
  stderr: CappedCollector;
  /** Why the shell could not be started, when it could not. */
  spawnError: string | undefined;
}

/**
 * Runs `bash -c <command>` (sh where bash is missing; either by its absolute path) in `workdir`, inside the agent's sandbox,
 * with an allow-listed environment and stdin ignored (or fed `input`), as the
 * leader of its own process group. An abort of `signal` (stop, the call's deadline) ends the whole
 * process tree, and the result says why from the signal's reason;
 * so does the shell's exit, so nothing it started in the background outlives the call. Output is
 * read until the pipes close, or for a short grace after the shell exited and its tree was ended:
 * a process that escaped the tree cannot hold the call open.
 */
export async function runShellCommand(options: ShellCommandOptions): Promise<ShellCommandResult> {
  const { subprocess, endTree } = await startTrackedProcess({
    command: shellProgram(options.sandbox),
    arguments: ["-c", options.command],
    workdir: options.workdir,
    baseEnvironment: "shell",
    environment: options.environment,
    sandbox: options.sandbox,
    cancelSignal: options.signal,
    killGraceMilliseconds: KILL_GRACE_MILLISECONDS,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  const onAbort = () => void endTree();
  options.signal.addEventListener("abort", onAbort, { once: true });
  const exited = new Promise<void>((resolve) => subprocess.once("exit", () => resolve()));
  // A plain timer, cleared when the call ends: an aborted `timers/promises` wait would make (and
  // throw away) an AbortError with its stack on every call.
  let graceTimer: NodeJS.Timeout | undefined;
  let callEnded = false;
  const graceOver = exited
    .then(endTree)
    .then(
      () =>
        new Promise<void>((resolve) => {
          if (callEnded) return resolve();
          graceTimer = setTimeout(resolve, PIPE_GRACE_MILLISECONDS);
        }),
    )
    .catch(() => undefined);

  const stdout = new CappedCollector(options.maxOutputBytes);
  const stderr = new CappedCollector(options.maxOutputBytes);
  subprocess.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  subprocess.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
  try {
    const closed = await Promise.race([subprocess.then(() => true), graceOver.then(() => false)]);
    if (!closed) {
      // Keep what was read; whatever holds the pipes is not part of the call any more.
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }
    const result = await subprocess;
    const spawnError =
      result.failed && result.exitCode === undefined && result.signal === undefined && !result.isCanceled
        ? String("shortMessage" in result ? result.shortMessage : "the shell could not be started")
        : undefined;
    // execa rejects a cancelled child with the signal's reason: that reason says why it ended.
    const ending = result.isCanceled ? abortEndingOf(options.signal.reason) : undefined;
    return { exitCode: result.exitCode, signalName: result.signal, ending, stdout, stderr, spawnError };
  } finally {
    callEnded = true;
    clearTimeout(graceTimer);
    options.signal.removeEventListener("abort", onAbort);
    await endTree();
  }
}

/** Where bash, then sh, are in the daemon's PATH: absolute paths, in PATH's order. */
let shells: string[] | undefined;

/**
 * bash where it is on PATH, else sh, by its absolute path: a relative folder of PATH ("." or
 * "bin") is a folder of the agent's workdir inside the sandbox, where an earlier call could leave a
 * `bash` that ignores the limits' preamble (child-limits.ts), so such folders are not looked in. A
 * shell in a folder the sandbox hides (a home's ~/.nix-profile/bin) is passed over for the next.
 */
function shellProgram(sandbox: SandboxPolicy): string {
  shells ??= [...onPath("bash"), ...onPath("sh")];
  const hidden = sandbox.mode === "off" ? [] : sandbox.hidden;
  return shells.find((shell) => !hidden.some((folder) => isWithin(shell, folder))) ?? "sh";
}

function onPath(program: string): string[] {
  return (process.env["PATH"] ?? "")
    .split(path.delimiter)
    .filter((folder) => path.isAbsolute(folder))
    .map((folder) => path.join(folder, program))
    .filter((candidate) => {
      try {
        accessSync(candidate, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
