import { mkdir } from "node:fs/promises";
import { loggerInScope, traceContextEnvironment, traceStep } from "../../telemetry/trace-scope.js";
import { cliSpanAttributes } from "../../telemetry/cli-span.js";
import type { Config } from "../../config/config-schema.js";
import type { CliSettings } from "../../definitions/agent-schema.js";
import { AgentdError, toAgentdError } from "../../errors/agentd-error.js";
import type { Logger } from "../../logging/logger.js";
import { runReasonOf } from "../../run-vocabulary/abort-ending.js";
import { RunAbort } from "../../run-vocabulary/run-control.js";
import { outcomeOfThrow, statusForReason } from "../../run-vocabulary/run-outcome.js";
import type { RunContext, Worker } from "../worker.js";
import type { RunOutcome } from "../../run-vocabulary/run-outcome.js";
import type { CliAdapter } from "./cli-adapter.js";
import type { CliCooldownRecords } from "./cli-cooldown-records.js";
import { completedOutcome, endedOutcome, fallbackOutcome, publishRunEvent } from "./cli-outcome.js";
import { CliTranscript } from "./cli-transcript.js";
import { readCutLine } from "./cut-line.js";
import type { CliFailureKind } from "../../run-vocabulary/cli-failure-kind.js";
import { type CliFailure, classifyFailure } from "./classify-failure.js";
import { fallbackNote } from "./fallback-note.js";
import { resolveAdapter } from "./resolve-adapter.js";
import { type CliExit, STDERR_TAIL_CHARACTERS, runCliProcess } from "./run-cli-process.js";
import { budgetCrossed, cliCost, unaffordableStart } from "./cli-budget.js";
import { type CliRules, cliRulesOf } from "./cli-rules.js";
import { CliRunDirectory } from "./cli-run-directory.js";
import { cliSandboxNeeds } from "../../sandbox/cli-sandbox-defaults.js";
import { maskCliOutput } from "./stderr-excerpt.js";
import { cliEnvironment } from "./cli-environment.js";
import type { SandboxHost } from "../../sandbox/sandbox-host.js";

/** The LLM worker as the CLI worker falls back to it: same task and system prompt, plus a note. */
export interface LlmFallback {
  run(context: RunContext, options?: { note?: string }): Promise<RunOutcome>;
}

export interface CliWorkerOptions {
  config: Pick<Config, "cli_tools" | "cli" | "llm" | "limits">;
  /**
   * True when agentd's sandbox contains every CLI child: the CLIs' own sandboxes stand down
   * (a nested one fails) and they may act without asking inside it.
   */
  outerSandbox?: boolean;
  /** Where failed CLI runs continue (unless the agent says `fallback: none`). */
  llmFallback: LlmFallback;
  cooldowns: CliCooldownRecords;
  /** Where each run's private folder (its TMPDIR) is made: `<data_dir>/cli-runs`. */
  runsDirectory: string;
  /** Resolves each run's sandbox: the agent's settings plus the CLI's hosts and config folders. */
  sandbox: SandboxHost;
  logger: Logger;
  /**
   * Masks a secret cut in two at the end of a text (the vault's redactor's `redactCutEnd`): where
   * agentd cuts a CLI's output, the events' masking of the whole cannot tell its first characters.
   */
  redactCutEnd?: (text: string) => string;
  /**
   * Masks a secret cut in two at the start of a text (the redactor's `redactCutStart`): the
   * fallback note quotes the end of a long message, and the note's masking cannot tell the rest.
   */
  redactCutStart?: (text: string) => string;
  now?: () => Date;
}

/**
 * Runs an agent's task with its `cli.tool` headless and, when the tool fails (not installed, auth,
 * quota, rate limit, hung, crash, no result) or is cooling down after a quota or rate-limit
 * failure, continues the task on the LLM worker with what the tool had produced — unless the
 * agent says `cli.fallback: none`. One instance serves every CLI run of the daemon.
 */
export class CliWorker implements Worker {
  readonly #options: CliWorkerOptions;
  readonly #logger: Logger;
  readonly #now: () => Date;

  constructor(options: CliWorkerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ module: "cli-worker" });
    this.#now = options.now ?? (() => new Date());
  }

  async run(context: RunContext): Promise<RunOutcome> {
    const settings = context.definition.frontmatter.cli;
    if (!settings) {
      throw new AgentdError("DEFINITION_INVALID", `agent ${context.definition.id} has no cli: section`, {
        file: context.definition.file,
        field: "cli",
        hint: "add cli: { tool: claude } (or gemini, codex, a cli_tools name), or use worker: llm",
      });
    }
    const workerName = `cli:${settings.tool}`;
    let adapter: CliAdapter;
    try {
      adapter = resolveAdapter(settings.tool, this.#options.config.cli_tools);
    } catch (error) {
      const failure: CliFailure = {
        kind: "not_installed",
        code: "CLI_NOT_INSTALLED",
        message: toAgentdError(error).message,
      };
      return this.#afterFailure(context, settings, workerName, failure, undefined);
    }
    const cooldown = this.#options.cooldowns.active(adapter.tool);
    if (cooldown) {
      const message = `${adapter.tool} is cooling down until ${cooldown.until.toISOString()} after a ${cooldown.kind} failure: ${cooldown.message}`;
      if (settings.fallback === "none") {
        const error = { code: "CLI_COOLDOWN" as const, message };
        publishRunEvent(context, "error", { ...error, retryable: true });
        return endedOutcome("failed", "cli_error", undefined, workerName, error);
      }
      return this.#fallBack(
        context,
        workerName,
        "cooldown",
        message,
        fallbackNote(adapter.tool, message, undefined),
        undefined,
      );
    }
    return this.#runTool(context, settings, adapter, workerName);
  }

  async #runTool(
    context: RunContext,
    settings: CliSettings,
    adapter: CliAdapter,
    workerName: string,
  ): Promise<RunOutcome> {
    const { definition } = context;
    await mkdir(definition.workdir, { recursive: true });
    const transcript = new CliTranscript(
      context.events,
      definition.id,
      context.runId,
      this.#options.redactCutEnd,
    );
    const parseLine = adapter.createLineParser();
    const rules = cliRulesOf(definition);
    const model = settings.model ?? adapter.defaultModel;
    // A call that cannot be afforded ends here, the CLI never started (and no fallback spends more).
    const prices = this.#options.config.llm.prices;
    const ownCostLimit =
      definition.frontmatter.limits?.max_cost_usd ?? this.#options.config.limits.max_cost_usd;
    const prompt = `${definition.systemPrompt}\n${context.task}`;
    const unaffordable = unaffordableStart(prompt, rules, ownCostLimit, prices, model);
    if (unaffordable)
      return this.#endAtLimit(context, transcript, workerName, "budget_exceeded", unaffordable);
    const runDirectory = await CliRunDirectory.create(this.#options.runsDirectory, context.runId);
    const budgetStop = new AbortController();
    let budgetCut: string | undefined;
    const inherited = cliEnvironment(adapter.tool);
    // Hosts and folders come from what the child will see, not from the daemon's environment.
    const needs = cliSandboxNeeds(adapter.tool, { ...inherited, ...adapter.environment });
    for (const folder of needs.create) await mkdir(folder, { recursive: true }).catch(() => {});
    const sandbox = this.#options.sandbox.policyFor({
      settings: definition.sandbox,
      workdir: definition.workdir,
      owner: `agent "${definition.id}" (CLI ${adapter.tool})`,
      executables: [adapter.command],
      hookCommands: definition.hooks.map((hook) => hook.command),
      // The run's own folder (its TMPDIR and agentd's files for it) lies in data_dir, hidden else.
      write: [...needs.write, runDirectory.path],
      hosts: needs.hosts,
      protect: needs.protect,
    });
    let exit: CliExit;
    try {
      const launch = adapter.prepare({
        task: context.task,
        systemPrompt: definition.systemPrompt,
        model,
        workdir: definition.workdir,
        runDirectory: runDirectory.path,
        rules,
        outerSandbox: this.#options.outerSandbox ?? sandbox.mode !== "off",
        configuredEnvironment: adapter.environment,
        configArguments: adapter.configArguments,
        extraArguments: settings.args,
      });
      await runDirectory.write(launch.files);
      this.#logger.info(
        { run: context.runId, tool: adapter.tool, command: adapter.command, model },
        "starting the CLI tool",
      );
      // The CLI is an agent of its own: its process is an `invoke_agent <tool>` span of the run's
      // trace, and gets that span as TRACEPARENT.
      exit = await traceStep(
        `invoke_agent ${adapter.tool}`,
        cliSpanAttributes(adapter.tool, model),
        (step) =>
          runCliProcess({
            command: adapter.command,
            arguments: launch.arguments,
            workdir: definition.workdir,
            inheritedEnvironment: inherited,
            // The user's variables (config folders, accounts) are honoured as given, over agentd's.
            environment: {
              ...runDirectory.environment(),
              ...launch.environment,
              ...adapter.environment,
              ...traceContextEnvironment(context.control.signal),
            },
            sandbox,
            control: context.control,
            idleTimeoutMilliseconds: settings.idle_timeout,
            isWorking: () => transcript.openCalls > 0,
            stopSignal: budgetStop.signal,
            killGraceMilliseconds: this.#options.config.cli.kill_grace,
            onStdoutLine: (line, droppedCharacters) => {
              const verdict =
                droppedCharacters === 0
                  ? parseLine(line, transcript)
                  : readCutLine(line, droppedCharacters, adapter.hasFinalLine, parseLine, transcript);
              budgetCut ??= budgetCrossed(transcript, rules, this.#options.config.llm.prices, model);
              if (budgetCut && !budgetStop.signal.aborted)
                budgetStop.abort(new RunAbort("budget_exceeded", budgetCut));
              return verdict;
            },
            logger: loggerInScope(this.#logger, step),
          }),
        context.control.signal,
      );
    } catch (error) {
      if (!AgentdError.is(error, "SANDBOX_UNAVAILABLE")) throw error;
      // Never run the tool unsandboxed, and never hand its task to a fallback that hides why.
      const failure = { code: error.code, message: error.describe() };
      publishRunEvent(context, "error", { ...failure, retryable: false });
      return endedOutcome("failed", "cli_error", undefined, workerName, failure);
    } finally {
      await runDirectory.remove();
    }
    transcript.flush();
    transcript.costUsd = cliCost(transcript, this.#options.config.llm.prices, model);

    if (budgetCut) return this.#endAtLimit(context, transcript, workerName, "budget_exceeded", budgetCut);
    if (transcript.limitReached) {
      return this.#endAtLimit(context, transcript, workerName, transcript.limitReached, transcript.answer);
    }
    // stderr goes into the run's error, shown and stored: the child's keys are masked out first,
    // and a vault value the tail's cut begins inside.
    const cutStart = this.#options.redactCutStart;
    const tail =
      cutStart && exit.stderrTail.length >= STDERR_TAIL_CHARACTERS
        ? cutStart(exit.stderrTail)
        : exit.stderrTail;
    const maskedExit = { ...exit, stderrTail: maskCliOutput(tail, { ...inherited, ...adapter.environment }) };
    const failure = classifyFailure({
      adapter,
      exit: maskedExit,
      transcript,
      idleTimeoutMilliseconds: settings.idle_timeout,
      now: this.#now(),
    });
    // A tool that finished its work counts even if a stop arrived just after.
    if (!failure) return this.#finished(context, transcript, workerName, rules, model);
    // A run that timed out says so with CLI_TIMEOUT below; a stop or shutdown ends it as such.
    const aborted = runReasonOf(context.control.signal);
    if (aborted && failure.kind !== "timeout")
      return endedOutcome(statusForReason(aborted), aborted, transcript, workerName);
    this.#logger.warn(
      { run: context.runId, tool: adapter.tool, kind: failure.kind, exit: maskedExit },
      failure.message,
    );
    return this.#afterFailure(context, settings, workerName, failure, transcript);
  }

  /**
   * The tool exited with an answer. It still fails when its usage, reported only at the end,
   * crossed the budget, or when the CLI's rules denied its every call of a tool it needed.
   */
  #finished(
    context: RunContext,
    transcript: CliTranscript,
    workerName: string,
    rules: CliRules,
    model: string | undefined,
  ): RunOutcome {
    const overBudget = budgetCrossed(transcript, rules, this.#options.config.llm.prices, model);
    if (overBudget) return this.#endAtLimit(context, transcript, workerName, "budget_exceeded", overBudget);
    const blocked = onlyDenied(transcript);
    if (blocked.length > 0) {
      const error = {
        code: "CLI_PERMISSION_DENIED" as const,
        message: `${workerName} was denied every call of ${blocked.join(", ")}, so its work is not done: allow what it needs in the agent's permissions`,
      };
      publishRunEvent(context, "error", { ...error, retryable: false });
      return endedOutcome("failed", "tool_error", transcript, workerName, error);
    }
    const outcome = completedOutcome(transcript, workerName);
    publishRunEvent(context, "result", {
      text: outcome.result ?? "",
      usage: outcome.usage,
      cost_usd: outcome.cost_usd,
      worker: workerName,
    });
    return outcome;
  }

  /** The run crossed its budget or turn limit: it ends there, without a fallback that would spend more. */
  #endAtLimit(
    context: RunContext,
    transcript: CliTranscript,
    workerName: string,
    reason: "budget_exceeded" | "max_iterations",
    message: string,
  ): RunOutcome {
    const error = {
      code: reason === "budget_exceeded" ? ("BUDGET_EXCEEDED" as const) : ("MAX_ITERATIONS" as const),
      message:
        reason === "budget_exceeded"
          ? `${workerName} was stopped at the run's budget: ${message}`
          : `${workerName} reached the run's max_iterations (${cliRulesOf(context.definition).maxIterations} turns)`,
    };
    publishRunEvent(context, "error", { ...error, retryable: false });
    return endedOutcome("failed", reason, transcript, workerName, error);
  }

  /** Reports the failure, starts a cooldown after quota/rate limit, then fails or falls back. */
  #afterFailure(
    context: RunContext,
    settings: CliSettings,
    workerName: string,
    failure: CliFailure,
    transcript: CliTranscript | undefined,
  ): Promise<RunOutcome> | RunOutcome {
    const retryable = failure.kind !== "not_installed" && failure.kind !== "auth";
    publishRunEvent(context, "error", { code: failure.code, message: failure.message, retryable });
    if (failure.kind === "quota" || failure.kind === "rate_limit") this.#coolDown(settings.tool, failure);
    // The run's time is used up: the LLM would start with none left.
    if (failure.kind === "timeout") return endedOutcome("failed", "timeout", transcript, workerName, failure);
    if (settings.fallback === "none")
      return endedOutcome("failed", "cli_error", transcript, workerName, failure);
    const note = fallbackNote(
      settings.tool,
      `${failure.kind}: ${failure.message}`,
      transcript,
      this.#options.redactCutStart,
    );
    return this.#fallBack(context, workerName, failure.kind, failure.message, note, transcript);
  }

  #coolDown(tool: string, failure: CliFailure): void {
    const until = failure.retryAt ?? new Date(this.#now().getTime() + this.#options.config.cli.cooldown);
    const kind = failure.kind === "quota" ? "quota" : "rate_limit";
    this.#options.cooldowns.start({ tool, until, kind, message: failure.message });
    this.#logger.warn(
      { tool, until: until.toISOString() },
      "the CLI tool cools down: its runs go to the fallback",
    );
  }

  async #fallBack(
    context: RunContext,
    workerName: string,
    reason: CliFailureKind | "cooldown",
    message: string,
    note: string,
    transcript: CliTranscript | undefined,
  ): Promise<RunOutcome> {
    publishRunEvent(context, "fallback", { from: workerName, to: "llm", reason, message });
    const worker = `${workerName}→llm`;
    try {
      return fallbackOutcome(await this.#options.llmFallback.run(context, { note }), transcript, worker);
    } catch (error) {
      return fallbackOutcome(outcomeOfThrow(error, context.control.signal, worker), transcript, worker);
    }
  }
}

/** Tools the CLI's rules denied that it never once ran successfully in this run. */
function onlyDenied(transcript: CliTranscript): string[] {
  const denied = new Set(transcript.denials.map((denial) => denial.tool));
  const succeeded = new Set(transcript.toolCalls.filter((call) => call.ok === true).map((call) => call.tool));
  return [...denied].filter((tool) => !succeeded.has(tool));
}
