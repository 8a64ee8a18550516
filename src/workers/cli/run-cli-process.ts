import { AgentdError } from "../../errors/agentd-error.js";
import type { Logger } from "../../logging/logger.js";
import { type AbortEnding, abortEndingOf } from "../../run-vocabulary/abort-ending.js";
import type { RunControl } from "../../run-vocabulary/run-control.js";
import type { LineVerdict } from "./cli-adapter.js";
import { IdleWatchdog } from "./idle-watchdog.js";
import { MAX_CLI_LINE_CHARACTERS } from "./cli-output-limits.js";
import { LineSplitter } from "./line-splitter.js";
import { startTrackedProcess } from "../../processes/tracked-process.js";
import type { SandboxPolicy } from "../../sandbox/sandbox-policy.js";
import { sandboxExitSignal, sandboxSpawnFailure } from "../../sandbox/sandbox-spawn-failure.js";

/** Last part of stderr kept for classification and error messages. */
export const STDERR_TAIL_CHARACTERS = 8_192;
/** How often descendants are looked up while the child runs (to catch those that leave the group). */
const COLLECT_INTERVAL_MILLISECONDS = 2_000;

export interface CliProcessOptions {
  command: string;
  arguments: string[];
  workdir: string;
  /** The daemon's variables the CLI may have: `cliEnvironment(tool)`, never the whole environment. */
  inheritedEnvironment: Record<string, string>;
  /** Added over the inherited variables: agentd's for the run, then the tool's configured `env`. */
  environment: Record<string, string>;
  /** The agent's sandbox with the CLI's needs; the child runs inside it. */
  sandbox: SandboxPolicy;
  /** The run: its signal is the child's deadline (stop, shutdown, the run's working-time timeout). */
  control: RunControl;
  /** No progress (see `onStdoutLine`) for this long, on the run's clock (`control.clock`) = hung. */
  idleTimeoutMilliseconds: number;
  /** True while the CLI runs a tool call of its own: the idle clock waits for it. */
  isWorking?: () => boolean;
  /** Ends the tree as a stop of agentd's own making (a budget crossed mid-run), aborted with why. */
  stopSignal?: AbortSignal;
  /** SIGTERM → SIGKILL delay. */
  killGraceMilliseconds: number;
  /**
   * Reads one stdout line; only `progress` resets the idle clock (stderr never does). A line longer
   * than `MAX_CLI_LINE_CHARACTERS` comes cut, with the number of characters dropped.
   */
  onStdoutLine: (line: string, droppedCharacters: number) => LineVerdict;
  logger: Logger;
}

/** How the child ended, as execa and the watchdog saw it: the input of failure classification. */
export interface CliExit {
  failed: boolean;
  /**
   * Why agentd cancelled it, when it did: the run ended (its timeout included), or the idle
   * watchdog found it hung (`cancelled` with CLI_HUNG), or a budget stop.
   */
  ending: AbortEnding | undefined;
  exitCode: number | undefined;
  signal: string | undefined;
  /** `ENOENT`, `EACCES`… when the child could not be spawned. */
  spawnErrorCode: string | undefined;
  /** execa's one-line description of a failure; empty on success. */
  message: string;
  stderrTail: string;
  durationMilliseconds: number;
}

/**
 * Runs one CLI child headless: stdin closed, its own process group, stdout fed line by line to
 * `onStdoutLine`. Its one deadline is the run's signal (stop, shutdown, and the run's timeout,
 * whose clock stops while the run is paused) merged with the idle watchdog's and the budget's:
 * any of them ends the whole process tree (SIGTERM, then SIGKILL after the grace), and the exit
 * says which from the signal's reason. Pause sends SIGSTOP/SIGCONT to the tree.
 * Whatever is left of the tree when the child exits is ended too, so no process outlives the run.
 * Rejects with SANDBOX_UNAVAILABLE when the sandbox cannot be set up.
 */
export async function runCliProcess(options: CliProcessOptions): Promise<CliExit> {
  const { control, logger } = options;
  // No child starts while the run is paused or held (a full store, a lapsed cluster lease).
  await control.waitWhilePaused();
  const hungController = new AbortController();
  const cancelSignal = AbortSignal.any([
    control.signal,
    hungController.signal,
    ...(options.stopSignal ? [options.stopSignal] : []),
  ]);
  const { subprocess, tree, endTree } = await startTrackedProcess({
    command: options.command,
    arguments: options.arguments,
    workdir: options.workdir,
    baseEnvironment: options.inheritedEnvironment,
    environment: options.environment,
    sandbox: options.sandbox,
    cancelSignal,
    killGraceMilliseconds: options.killGraceMilliseconds,
  });

  const watchdog = new IdleWatchdog(
    options.idleTimeoutMilliseconds,
    () => {
      logger.warn(
        { command: options.command },
        "CLI child made no progress within its idle timeout: killing it",
      );
      hungController.abort(
        new AgentdError("CLI_HUNG", `${options.command} made no progress within its idle timeout`),
      );
    },
    options.isWorking,
    options.control.clock,
  );
  const onCancel = () => void endTree();
  cancelSignal.addEventListener("abort", onCancel, { once: true });
  const collector = setInterval(() => void tree?.collect(), COLLECT_INTERVAL_MILLISECONDS);
  // Signals go out in order: a quick pause/resume must not end with SIGCONT overtaken by SIGSTOP.
  let pauseSignals = Promise.resolve();
  const onPauseChange = (paused: boolean) => {
    if (paused) watchdog.pause();
    else watchdog.resume();
    pauseSignals = pauseSignals.then(() => tree?.signal(paused ? "SIGSTOP" : "SIGCONT"));
  };
  const stopListening = control.onPauseChange(onPauseChange);
  if (control.halted) onPauseChange(true);
  subprocess.on("exit", () => void endTree());

  const stdout = new LineSplitter((line, droppedCharacters) => {
    try {
      if (options.onStdoutLine(line, droppedCharacters) === "progress") watchdog.touch();
    } catch (error) {
      logger.error({ err: error }, "a CLI output line could not be read");
    }
  }, MAX_CLI_LINE_CHARACTERS);
  let stderrTail = "";
  subprocess.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  // stderr is where the CLIs print retry and reconnect notices: it never counts as progress.
  subprocess.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARACTERS);
  });

  try {
    const result = await subprocess;
    stdout.end();
    return {
      failed: result.failed,
      // execa rejects a cancelled child with the signal's reason: that reason says why it ended.
      ending: result.isCanceled ? abortEndingOf(cancelSignal.reason) : undefined,
      ...exitOf(result.exitCode, result.signal, options.sandbox.mode !== "off"),
      spawnErrorCode:
        "code" in result && typeof result.code === "string"
          ? result.code
          : result.exitCode !== 0
            ? sandboxSpawnFailure(stderrTail)
            : undefined,
      message: result.failed && "shortMessage" in result ? String(result.shortMessage) : "",
      stderrTail,
      durationMilliseconds: result.durationMs,
    };
  } finally {
    watchdog.stop();
    clearInterval(collector);
    cancelSignal.removeEventListener("abort", onCancel);
    stopListening();
    await endTree();
  }
}

/** Exit code and signal as the program itself ended, seen through bubblewrap when sandboxed. */
function exitOf(exitCode: number | undefined, signal: string | undefined, sandboxed: boolean) {
  const signalled = sandboxed && signal === undefined ? sandboxExitSignal(exitCode) : undefined;
  if (signalled === undefined) return { exitCode, signal };
  return { exitCode: undefined, signal: signalled };
}
