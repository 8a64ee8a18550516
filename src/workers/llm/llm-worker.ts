import type { Config } from "../../config/config-schema.js";
import type { ChatMessage, ChatToolCall, ModelResponse } from "../../llm/chat-message.js";
import type { ModelProvider } from "../../llm/model-client.js";
import type { ToolExecutor } from "../../tools/tool-executor.js";
import { settleOrAbandon } from "../../util/settle-or-abandon.js";
import type { RunContext, Worker } from "../worker.js";
import type { RunOutcome } from "../../run-vocabulary/run-outcome.js";
import { callModel } from "./call-model.js";
import { CONTINUE_AFTER_LENGTH } from "./guard-messages.js";
import { LoopDetector } from "./loop-detector.js";
import { failureOutcome } from "./loop-outcome.js";
import { HistoryRepairer } from "./repair-history.js";
import { RunBudget } from "./run-budget.js";
import { HistoryTokens } from "./history-tokens.js";
import { compactRunHistory } from "./run-compaction.js";
import { RunEvents } from "./run-events.js";
import { type RecordedAnswer, interruptedCallOutput, recordedAnswers } from "./recorded-answers.js";
import { runToolCalls } from "./run-tool-calls.js";
import { ToolFailures } from "./tool-failures.js";
import { OfferedTools } from "./offered-tools.js";

/** Continuation requests after `finish_reason: length` before the partial answer is taken as final. */
const MAX_CONTINUATIONS = 2;

export interface LlmWorkerOptions {
  model: ModelProvider;
  tools: ToolExecutor;
  /** Config `llm`: compaction settings and the default temperature. */
  llm: Pick<Config["llm"], "context" | "temperature">;
}

/** Extra input for one run. */
export interface LlmRunOptions {
  /** Appended to the task: e.g. what a CLI tool produced before the run fell back to the LLM. */
  note?: string;
  /** A conversation to continue (a checkpoint) instead of starting from the system prompt and task. */
  history?: ChatMessage[];
}

/** One run in progress: its parts and what it has seen. */
interface LoopRun {
  context: RunContext;
  budget: RunBudget;
  events: RunEvents;
  lastText: string;
}

/**
 * The LLM worker: a think-act-observe loop against an OpenAI-compatible model. Each round:
 * pre-flight (stop, timeout, iterations, tokens, cost) → wait while paused → repair the history →
 * compact it when too long → one model call → its tool calls through the ToolExecutor → repeat
 * until the model answers without tools. Guardrails: continuation after `length`, loop detection,
 * tools disabled after repeated failures, and budgets cut off mid-stream.
 */
export class LlmWorker implements Worker {
  readonly #options: LlmWorkerOptions;

  constructor(options: LlmWorkerOptions) {
    this.#options = options;
  }

  async run(context: RunContext, options: LlmRunOptions = {}): Promise<RunOutcome> {
    const run: LoopRun = {
      context,
      budget: new RunBudget(context.definition.limits, (usage, costUsd) =>
        context.recordSpending?.(usage, costUsd),
      ),
      events: new RunEvents(context),
      lastText: "",
    };
    const { budget, events } = run;
    let outcome: RunOutcome;
    try {
      const text = await this.#loop(run, options);
      outcome = {
        status: "completed",
        result: text,
        usage: budget.usage,
        cost_usd: budget.costUsd,
        worker: "llm",
      };
      events.publish("result", { text, usage: budget.usage, cost_usd: budget.costUsd, worker: "llm" });
    } catch (error) {
      outcome = failureOutcome(error, context, budget, run.lastText);
      if (outcome.error) events.publish("error", outcome.error);
    }
    return outcome;
  }

  async #loop(run: LoopRun, options: LlmRunOptions): Promise<string> {
    const { context, budget, events } = run;
    const { control } = context;
    const parts = { model: this.#options.model, context, budget, events };
    // Listing tools may start MCP servers (60 s and more): a stop must not wait for it.
    const specs = await settleOrAbandon(
      this.#options.tools.specs(context.definition, context.control.signal),
      context.control.signal,
      0,
    );
    const failures = new ToolFailures();
    const detector = new LoopDetector();
    const answerParts: string[] = [];
    const tokens = new HistoryTokens();
    const repairer = new HistoryRepairer();
    // What every round passes on, made once per run.
    const compaction = { ...parts, settings: this.#options.llm.context, tokens };
    const modelCall = { ...parts, llm: this.#options.llm };
    const tools = new OfferedTools(specs, failures);
    let messages = startingMessages(context, options);
    const checkpoints = context.checkpoints;
    /** Whether round 0 still waits to be saved (a later save replaces it). */
    let firstSavePending = false;
    /** Saves `current`, an array of its own: the loop goes on adding to its history after the save. */
    const save = (current: ChatMessage[]) => {
      if (checkpoints === undefined) return undefined;
      firstSavePending = false;
      const saved = checkpoints.save({
        round: budget.iterations,
        messages: current,
        usage: budget.usage,
        cost_usd: budget.costUsd,
        removed_tools: [...failures.disabled],
        recent_calls: detector.recentCalls(),
      });
      // Awaited where it matters (before a round's tools run), where a failure to write shows too.
      saved.catch(() => undefined);
      return saved;
    };
    const from = checkpoints?.resumeFrom;
    if (from) {
      budget.iterations = from.round;
      budget.restore(from.usage, from.cost_usd);
      failures.restoreDisabled(from.removed_tools);
      detector.restore(from.recent_calls);
      // The answers given before the cut (on any node): a resumed run sees them. Read only for a
      // call that was cut off: the whole run log is read for them, and it may hold millions of events.
      const interrupted = interruptedCallsOf(from.messages);
      const answers =
        interrupted.length === 0 ? new Map() : recordedAnswers((await context.history?.()) ?? []);
      messages = answerInterruptedCalls(from.messages, interrupted, events, answers);
    }
    // Round 0. A new run's holds only the prompt and task (what its record has too): written once
    // its first model request is out, and those of the runs launched with it (unless a later save
    // came first), so no request waits for a disk write nor its masking. A resumed run's holds the
    // interrupted calls it just answered, and reported: on disk first, so a second crash never
    // answers them twice.
    if (from) await save([...messages]);
    else {
      const initial = [...messages];
      firstSavePending = true;
      const saveFirst = () => {
        if (firstSavePending) void save(initial);
      };
      setImmediate(() => (context.afterLaunches ? context.afterLaunches(saveFirst) : saveFirst()));
    }
    for (;;) {
      control.signal.throwIfAborted();
      budget.check();
      // Not halted (nearly always): go on in this same tick, with no promise to wait for.
      if (control.halted) await control.waitWhilePaused();
      messages = repaired(messages, repairer, events);
      // Within budget (nearly every round) there is nothing to compact: no call, no await.
      if (tokens.of(messages) > compaction.settings.max_tokens)
        messages = await compactRunHistory(messages, compaction);
      const response = await callModel(messages, tools.current(), modelCall, tokens.of(messages));
      budget.iterations += 1;
      budget.record(response.usage, response.costUsd);
      if (response.text) run.lastText = response.text;
      messages.push(assistantMessage(response));
      // On disk before the tools run: a call cut off by a crash is answered as interrupted, never rerun.
      const saved = save([...messages]);
      // A stop does not wait for a store that is away; the tools then do not run.
      if (saved && response.toolCalls.length > 0) await settleOrAbandon(saved, control.signal, 0);

      if (response.toolCalls.length === 0) {
        answerParts.push(response.text);
        if (response.finishReason !== "length") return answerParts.join("");
        if (answerParts.length > MAX_CONTINUATIONS) {
          events.publish("warning", {
            code: "LENGTH_LIMIT",
            message: `the answer was still cut off after ${MAX_CONTINUATIONS} continuations; the partial answer is the result`,
          });
          return answerParts.join("");
        }
        if (response.text) events.publish("thought", { text: response.text });
        messages.push({ role: "user", content: CONTINUE_AFTER_LENGTH });
        continue;
      }

      answerParts.length = 0;
      if (response.text) events.publish("thought", { text: response.text });
      /** How many of the round's results the last save held. */
      let savedResults = 0;
      const round = await runToolCalls(response.toolCalls, {
        context,
        executor: this.#options.tools,
        failures,
        detector,
        events,
        budget,
        // The round so far, checkpointed after each result (no copy to make without checkpoints).
        ...(checkpoints === undefined
          ? {}
          : {
              onResult: (results) => {
                savedResults = results.length;
                void save(messages.concat(results));
              },
            }),
      });
      messages.push(...round.results);
      for (const notice of round.notices) messages.push({ role: "user", content: notice });
      // The save of the last result holds the whole round already, unless a result was not saved
      // (a removed tool's answer) or a notice followed (a tool removed, a loop warned about).
      if (savedResults < round.results.length || round.notices.length > 0) void save([...messages]);
    }
  }
}

function startingMessages(context: RunContext, options: LlmRunOptions): ChatMessage[] {
  const note = options.note?.trim();
  if (options.history && options.history.length > 0) {
    const messages = [...options.history];
    if (note) messages.push({ role: "user", content: note });
    return messages;
  }
  return [
    { role: "system", content: context.definition.systemPrompt },
    { role: "user", content: note ? `${context.task}\n\n${note}` : context.task },
  ];
}

/**
 * A resumed conversation whose last tool calls have no result: each was cut off by the crash or
 * shutdown, so it may or may not have taken effect. The model is told so instead of the call being
 * run again, with what a human answered for it before the cut (`answers`, from the run's log): an
 * `ask_human` call's answer is its result.
 */
function answerInterruptedCalls(
  messages: readonly ChatMessage[],
  interrupted: readonly ChatToolCall[],
  events: RunEvents,
  answers: ReadonlyMap<string, RecordedAnswer>,
): ChatMessage[] {
  const result = [...messages];
  for (const call of interrupted) {
    const { ok, output } = interruptedCallOutput(call.function.name, answers.get(call.id));
    result.push({ role: "tool", tool_call_id: call.id, content: output });
    events.publish("observation", {
      call_id: call.id,
      tool: call.function.name,
      ok,
      output,
      duration_ms: 0,
    });
  }
  return result;
}

/** The last assistant message's tool calls that have no result in `messages`. */
function interruptedCallsOf(messages: readonly ChatMessage[]): ChatToolCall[] {
  const last = messages.findLast((message) => message.role === "assistant");
  const calls = last?.role === "assistant" ? (last.tool_calls ?? []) : [];
  if (calls.length === 0) return [];
  const answered = new Set(
    messages.flatMap((message) => (message.role === "tool" ? [message.tool_call_id] : [])),
  );
  return calls.filter((call) => !answered.has(call.id));
}

function repaired(messages: ChatMessage[], repairer: HistoryRepairer, events: RunEvents): ChatMessage[] {
  const repair = repairer.repair(messages);
  if (repair.addedResults > 0 || repair.droppedResults > 0) {
    events.publish("warning", {
      code: "HISTORY_REPAIRED",
      message: `repaired the conversation before the model call: ${repair.addedResults} missing tool results added, ${repair.droppedResults} orphan tool results dropped`,
    });
  }
  return repair.messages;
}

function assistantMessage(response: ModelResponse): ChatMessage {
  return response.toolCalls.length === 0
    ? { role: "assistant", content: response.text }
    : { role: "assistant", content: response.text || null, tool_calls: response.toolCalls };
}
