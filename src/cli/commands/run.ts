import type { Command } from "commander";
import { type SingleRun, startSingleRun, type SingleRunOptions } from "../../app/compose-run.js";
import { announceApprovals, promptApprovals } from "../../approvals/terminal-approvals.js";
import { announceQuestions, promptQuestions } from "../../questions/terminal-questions.js";
import { loadConfig } from "../../config/load-config.js";
import { closeInheritedDescriptors } from "../../processes/inherited-descriptors.js";
import { loadAgentDefinitions } from "../../definitions/load-agent-definitions.js";
import { AgentdError, toAgentdError } from "../../errors/agentd-error.js";
import type { AgentEvent } from "../../events/agent-event.js";
import { type LockHolder, LockHolderSchema } from "../../locks/data-directory-lock.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { pickTask } from "../../runs/runnable-definition.js";
import { didYouMean } from "../../schema/known-keys.js";
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  describeForUser,
  errorForUser,
  type GlobalOptions,
} from "../output.js";
import { openRunLog } from "../terminal/run-log.js";
import { createRunProgress } from "../terminal/run-progress.js";
import { printRunSummary } from "../terminal/run-summary.js";
import { isLiveTerminal, wantsColor } from "../terminal/terminal-style.js";
import { runOnDaemon } from "./run-on-daemon.js";

export interface RunCommandOptions {
  agent: string;
  task?: string | undefined;
  config?: string | undefined;
  json?: boolean | undefined;
  /** Log lines on stderr too; without it they go to `<data_dir>/logs/agentd-run.log`. */
  verbose?: boolean | undefined;
  cwd?: string;
  environment?: NodeJS.ProcessEnv;
  /** Overrides for tests (the model, the tools). */
  compose?: Pick<SingleRunOptions, "model" | "tools" | "logger">;
}

/** Where `agentd run` writes, and how it hears Ctrl-C. Injected so tests drive it in-process. */
export interface RunCommandIo {
  /** Results and JSON lines. */
  stdout: (text: string) => void;
  /** Progress and errors for a human. */
  stderr: (text: string) => void;
  /** Colours on progress lines. */
  color: boolean;
  /** stderr is a terminal: a status line (spinner, elapsed time) is redrawn in place. */
  live?: boolean | undefined;
  /** Registers the Ctrl-C handler; returns the function that removes it. */
  onInterrupt: (handler: () => void) => () => void;
  /**
   * Where a human answers approvals (the terminal's stdin), asked on stderr. Absent when stdin or
   * stderr is not a terminal: `ask` calls then follow `approvals.on_timeout` once they expire.
   */
  approvalInput?: NodeJS.ReadableStream | undefined;
}

/**
 * `agentd run <agent> [task]`: runs one agent in this process and prints its events as they come
 * (JSON lines with --json, then the run record). Exit code 0 completed, 1 anything else (an
 * invalid agent included), 2 bad usage (unknown agent, no task). Ctrl-C stops the run `user_stop`.
 * An `ask` tool call is put to the human on the terminal (`io.approvalInput`); without one it
 * waits for its timeout and follows `approvals.on_timeout`.
 */
export async function runAgentCommand(options: RunCommandOptions, io: RunCommandIo): Promise<number> {
  const fail = (error: AgentdError, code: number) => {
    if (options.json) io.stdout(`${JSON.stringify({ error: errorForUser(error) })}\n`);
    else io.stderr(`error ${error.code}: ${describeForUser(error)}\n`);
    return code;
  };
  let config;
  let configFile: string | undefined;
  try {
    const loaded = loadConfig({
      file: options.config,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...environment(options),
    });
    config = loaded.config;
    configFile = loaded.file;
  } catch (error) {
    return fail(toAgentdError(error, "CONFIG_INVALID"), EXIT_FAILURE);
  }
  // Only this agent's files, its sub-agents' and their presets are read: not the whole folder.
  const { snapshot, agentIds } = await loadAgentDefinitions(config, options.agent);
  const statuses = snapshot.agents.filter((status) => status.id === options.agent);
  if (statuses.length === 0) {
    const suggestion = didYouMean(options.agent, agentIds);
    const hint = suggestion
      ? `did you mean ${suggestion}?`
      : `agentd validate lists the agents in ${config.agents_dir}`;
    return fail(new AgentdError("USAGE", `no agent "${options.agent}"`, { hint }), EXIT_USAGE);
  }
  const invalid = statuses.filter((status) => !status.valid);
  const definition = snapshot.get(options.agent);
  if (invalid.length > 0 || !definition) {
    const errors = invalid.flatMap((status) => status.errors);
    if (options.json)
      io.stdout(
        `${JSON.stringify({ error: { code: "DEFINITION_INVALID", agent: options.agent, errors: errors.map((error) => error.toJSON()) } })}\n`,
      );
    else for (const error of errors) io.stderr(`error ${error.code}: ${error.describe()}\n`);
    return EXIT_FAILURE;
  }
  let task: string;
  try {
    task = pickTask(options.task, definition);
  } catch (error) {
    const reason = toAgentdError(error);
    return fail(
      new AgentdError("USAGE", reason.message, { hint: `agentd run ${definition.id} "<task>"` }),
      EXIT_USAGE,
    );
  }

  const progress = createRunProgress({
    write: io.stderr,
    agent: definition.id,
    color: io.color,
    // Log lines on stderr would tear a redrawn status line: --verbose shows them as plain lines.
    live: Boolean(io.live) && !options.verbose && !options.json,
  });
  // One printer for the run in this process and the run on a daemon: the same lines either way.
  const print = options.json
    ? (event: AgentEvent) => io.stdout(`${JSON.stringify(event)}\n`)
    : (event: AgentEvent) => progress.show(event);
  const say = progress.write;
  const log = options.verbose || options.compose?.logger ? undefined : await openRunLog(config.data_dir);
  // The status line goes and the log file is flushed before the summary, however the run ended.
  const release = async () => {
    progress.close();
    await log?.close();
  };
  const done = async (record: RunRecord): Promise<number> => {
    await release();
    return finish(record, options, io);
  };
  let run: SingleRun;
  try {
    run = await startSingleRun({
      config,
      configFile,
      snapshot,
      definition,
      task,
      onEvent: print,
      logDestination: log?.stream,
      ...options.compose,
    });
  } catch (error) {
    const failure = toAgentdError(error);
    const holder = AgentdError.is(failure, "DATA_DIR_LOCKED") ? lockHolderOf(failure) : undefined;
    // Another `agentd run` holds the folder (or no holder could be named): said, not waited for.
    if (holder?.command !== "start") {
      await release();
      return fail(failure, EXIT_FAILURE);
    }
    // A daemon owns the folder: it runs the run, this process shows it (one writer per folder).
    return runOnDaemon({
      holder,
      config,
      environment: options.environment ?? process.env,
      agent: definition.id,
      task: options.task,
      onEvent: print,
      notice: (text) => {
        if (!options.json) say(text);
      },
      onInterrupt: io.onInterrupt,
    }).then(done, async (daemonFailure: unknown) => {
      await release();
      return fail(toAgentdError(daemonFailure), EXIT_FAILURE);
    });
  }
  // --json output is for programs: no one is asked there either.
  const onTerminal = io.approvalInput && !options.json ? io.approvalInput : undefined;
  const stopAskingApprovals = onTerminal
    ? promptApprovals(run.approvals, { input: onTerminal, write: say })
    : announceApprovals(run.approvals, say);
  const stopAskingQuestions = onTerminal
    ? promptQuestions(run.questions, { input: onTerminal, write: say })
    : announceQuestions(run.questions, say);
  const stopAsking = () => {
    stopAskingApprovals();
    stopAskingQuestions();
  };
  // The first Ctrl-C stops the run cleanly; the handler then steps aside, so a second one quits at once.
  const removeInterrupt = io.onInterrupt(() => {
    removeInterrupt();
    if (!options.json) say("stopping the run (Ctrl-C again to quit at once)…\n");
    run.stop();
  });
  // The run is what this process is for: its timers (timeout, approval expiry) are unref'd, so while
  // a call waits for an approval nothing else would keep the process from exiting mid-run.
  const keepAlive = setInterval(() => undefined, 60_000);
  const record = await run.finished.finally(() => {
    clearInterval(keepAlive);
    removeInterrupt();
    stopAsking();
  });
  return done(record);
}

/** The run record (JSON) or the summary, and the exit code by outcome. */
function finish(record: RunRecord, options: RunCommandOptions, io: RunCommandIo): number {
  if (options.json) io.stdout(`${JSON.stringify(record)}\n`);
  else printRunSummary(record, io);
  return record.status === "completed" ? EXIT_OK : EXIT_FAILURE;
}

function lockHolderOf(error: AgentdError): LockHolder | undefined {
  const parsed = LockHolderSchema.safeParse(error.details?.["holder"]);
  return parsed.success ? parsed.data : undefined;
}

export function registerRunCommand(program: Command): void {
  program
    .command("run <agent> [task]")
    .description(
      "run one agent now, in this process, printing its events as they come; exit 0 when it completes",
    )
    .option("--follow", "print events as they come (always on for an in-process run)")
    .option("--verbose", "show log lines on stderr (else they go to <data_dir>/logs/agentd-run.log)")
    .action(
      async (agent: string, task: string | undefined, options: { verbose?: boolean }, command: Command) => {
        // The run, its tools and their sandboxes are in this process, as the daemon's are in
        // `agentd start`'s: what started it must not reach them.
        closeInheritedDescriptors();
        const globals = command.optsWithGlobals<GlobalOptions>();
        process.exitCode = await runAgentCommand(
          { agent, task, config: globals.config, json: globals.json, verbose: options.verbose },
          {
            stdout: (text) => process.stdout.write(text),
            stderr: (text) => process.stderr.write(text),
            color: wantsColor(process.stderr),
            live: isLiveTerminal(process.stderr),
            onInterrupt: (handler) => {
              process.on("SIGINT", handler);
              return () => process.off("SIGINT", handler);
            },
            approvalInput: process.stdin.isTTY && process.stderr.isTTY ? process.stdin : undefined,
          },
        );
      },
    );
}

function environment(options: RunCommandOptions): { environment?: NodeJS.ProcessEnv } {
  return options.environment ? { environment: options.environment } : {};
}
