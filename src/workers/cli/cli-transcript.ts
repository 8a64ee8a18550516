import type { EventDataByType, EventDraft } from "../../events/agent-event.js";
import type { EventPublisher } from "../../events/event-bus.js";
import { CappedText, type CutEndMask } from "./capped-text.js";
import { MAX_CLI_TEXT_CHARACTERS, MAX_FALLBACK_NOTE_CHARACTERS } from "./cli-output-limits.js";
import { RecentTexts } from "./recent-texts.js";
import { EMPTY_USAGE, type Usage, addUsage } from "../../run-vocabulary/run-status.js";

/** Longest tool output an `observation` event carries; the rest is cut and flagged `truncated`. */
const MAX_OBSERVATION_CHARACTERS = 16_384;
/** Garbage lines reported as `warning` events per run; later ones are only counted. */
const MAX_WARNINGS = 5;

/** The final line of a CLI tool's structured output: its answer, or the error it ended with. */
export interface CliFinal {
  text: string;
  isError: boolean;
  usage?: Usage;
  costUsd?: number;
}

/** One tool call the CLI made, as the fallback summary lists it. */
export interface CliToolCall {
  callId: string;
  tool: string;
  arguments: unknown;
  ok?: boolean;
}

/** A tool call the CLI's own permission rules refused. */
export interface CliDenial {
  tool: string;
  detail: string;
}

/** A limit the CLI itself stopped at (its turn or budget flag). */
export type CliLimit = "max_iterations" | "budget_exceeded";

/**
 * What one CLI run produced, published as events while it arrives: model text (`thought`), tool
 * calls (`action`), their results (`observation`), and parse problems (`warning`). The adapters'
 * line parsers write here; the worker reads the final answer, the errors and the usage from it.
 */
export class CliTranscript {
  /** The model's last texts, for the fallback note. */
  readonly recentTexts = new RecentTexts(MAX_FALLBACK_NOTE_CHARACTERS);
  readonly toolCalls: CliToolCall[] = [];
  /** Error messages the tool reported in its structured output. */
  readonly errors: string[] = [];
  /** The HTTP status of the API error the tool reported, when it gives one. */
  httpStatus: number | undefined;
  final: CliFinal | undefined;
  usage: Usage = EMPTY_USAGE;
  costUsd = 0;
  ignoredLines = 0;
  /** Calls the CLI's permission rules refused, reported as `warning` events. */
  readonly denials: CliDenial[] = [];
  /** Retry and reconnect notices: noise for the watchdog, the last one explains a hang. */
  retryNotices = 0;
  lastRetryNotice: string | undefined;
  /** The CLI stopped at its own turn or budget limit. */
  limitReached: CliLimit | undefined;
  readonly #streamedUsage = new Map<string, Usage>();
  /** The sum of `#streamedUsage`, kept as it changes: a run of 100k messages must not sum them per line. */
  #streamedTotal: Usage = EMPTY_USAGE;
  /** `toolCalls` by call id, and how many have no observation yet. */
  readonly #callsById = new Map<string, CliToolCall>();
  #openCalls = 0;
  readonly #events: EventPublisher;
  readonly #agent: string;
  readonly #runId: string;
  readonly #startedAt = new Map<string, number>();
  /** Streamed text not yet published, cut past `MAX_CLI_TEXT_CHARACTERS`. */
  readonly #pendingText: CappedText;
  /** Text since the last tool call: the answer for tools that have no final `result` line. */
  readonly #answer: CappedText;
  /** Masks a secret cut in two where agentd cuts the CLI's text (none without a vault). */
  readonly cutEnd: CutEndMask;

  constructor(events: EventPublisher, agent: string, runId: string, cutEnd: CutEndMask = (text) => text) {
    this.#events = events;
    this.#agent = agent;
    this.#runId = runId;
    this.cutEnd = cutEnd;
    this.#pendingText = new CappedText(MAX_CLI_TEXT_CHARACTERS, "a CLI's text", cutEnd);
    this.#answer = new CappedText(MAX_CLI_TEXT_CHARACTERS, "a CLI's answer", cutEnd);
  }

  /** The model's answer: the final line's text, else what it said after its last tool call. */
  get answer(): string {
    this.flush();
    if (this.final && !this.final.isError) return this.final.text;
    return this.#answer.text.trim();
  }

  /** A whole piece of model text (cut past `MAX_CLI_TEXT_CHARACTERS`, with a note). */
  thought(text: string): void {
    this.flush();
    const whole = new CappedText(MAX_CLI_TEXT_CHARACTERS, "a CLI's text", this.cutEnd);
    whole.append(text);
    this.#publishThought(whole);
  }

  /** A streamed chunk of model text; consecutive chunks become one `thought`. */
  thoughtChunk(text: string): void {
    this.#pendingText.append(text);
  }

  action(callId: string, tool: string, input: unknown): void {
    this.flush();
    this.#answer.clear();
    this.#startedAt.set(callId, Date.now());
    const call: CliToolCall = { callId, tool, arguments: input };
    this.toolCalls.push(call);
    this.#callsById.set(callId, call);
    this.#openCalls += 1;
    this.#publish("action", { call_id: callId, tool, arguments: input });
  }

  observation(callId: string, ok: boolean, output: string): void {
    this.flush();
    const call = this.#callsById.get(callId);
    if (call) {
      if (call.ok === undefined) this.#openCalls -= 1;
      call.ok = ok;
    }
    const startedAt = this.#startedAt.get(callId);
    const truncated = output.length > MAX_OBSERVATION_CHARACTERS;
    this.#publish("observation", {
      call_id: callId,
      tool: call?.tool ?? "unknown",
      ok,
      output: truncated ? this.cutEnd(output.slice(0, MAX_OBSERVATION_CHARACTERS)) : output,
      duration_ms: startedAt === undefined ? 0 : Date.now() - startedAt,
      ...(truncated ? { truncated } : {}),
    });
  }

  /** An error the tool reported (API error, failed turn); classification reads these first. */
  error(message: string, httpStatus?: number): void {
    this.flush();
    this.errors.push(message);
    if (httpStatus !== undefined) this.httpStatus = httpStatus;
  }

  /**
   * Usage the tool streamed for one model message (keyed by its id, so a message repeated per
   * content block counts once); the run's usage is their sum until the final line says otherwise.
   */
  streamedUsage(messageId: string, usage: Usage): void {
    const before = this.#streamedUsage.get(messageId);
    this.#streamedUsage.set(messageId, usage);
    this.#streamedTotal = addUsage(
      before ? subtractUsage(this.#streamedTotal, before) : this.#streamedTotal,
      usage,
    );
    if (this.final?.usage) return;
    this.usage = this.#streamedTotal;
  }

  /** The call of this id, when the tool announced it. */
  call(callId: string): CliToolCall | undefined {
    return this.#callsById.get(callId);
  }

  /** Calls not yet answered by an observation: while one runs, silence is the tool working. */
  get openCalls(): number {
    return this.#openCalls;
  }

  /** A call the CLI's permission rules refused: a `warning` event, and counted for the outcome. */
  denied(tool: string, detail: string): void {
    this.flush();
    this.denials.push({ tool, detail });
    this.#publish("warning", { code: "CLI_TOOL_DENIED", message: `${tool} was denied: ${detail}` });
  }

  /** A retry or reconnect notice of the tool: not progress. */
  retryNotice(message: string): void {
    this.retryNotices += 1;
    this.lastRetryNotice = message.length > 300 ? `${this.cutEnd(message.slice(0, 300))}…` : message;
  }

  finish(final: CliFinal): void {
    this.flush();
    this.final = final;
    // A final line that counts nothing does not erase what the tool streamed.
    if (final.usage && final.usage.total_tokens > 0) this.usage = final.usage;
    if (final.costUsd !== undefined) this.costUsd = final.costUsd;
    if (final.isError) this.errors.push(final.text);
  }

  /** A line that is not the tool's structured output: reported, never fatal. */
  ignoredLine(line: string, why: string): void {
    this.ignoredLines += 1;
    if (this.ignoredLines > MAX_WARNINGS) return;
    const shown = line.length > 200 ? `${this.cutEnd(line.slice(0, 200))}…` : line;
    this.#publish("warning", {
      code: "CLI_OUTPUT_IGNORED",
      message: `ignored a line of CLI output (${why}): ${shown}`,
    });
  }

  /** A non-fatal problem the tool itself reported. */
  toolWarning(message: string): void {
    this.flush();
    this.#publish("warning", { code: "CLI_TOOL_WARNING", message });
  }

  /** Publishes buffered streamed text as one `thought`. */
  flush(): void {
    if (this.#pendingText.empty) return;
    this.#publishThought(this.#pendingText);
    this.#pendingText.clear();
  }

  /** Publishes `piece` (with its cut note, when cut) and adds it to the answer, whose note counts the cut too. */
  #publishThought(piece: CappedText): void {
    const text = piece.text;
    if (text.trim() === "") return;
    this.recentTexts.push(text);
    const kept = piece.kept;
    this.#answer.append(this.#answer.empty ? kept : `\n${kept}`, piece.dropped);
    this.#publish("thought", { text });
  }

  #publish<Type extends "thought" | "action" | "observation" | "warning">(
    type: Type,
    data: EventDataByType[Type],
  ): void {
    this.#events.publish({ agent: this.#agent, run: this.#runId, type, data } as EventDraft);
  }
}

function subtractUsage(left: Usage, right: Usage): Usage {
  return {
    prompt_tokens: left.prompt_tokens - right.prompt_tokens,
    completion_tokens: left.completion_tokens - right.completion_tokens,
    total_tokens: left.total_tokens - right.total_tokens,
  };
}
