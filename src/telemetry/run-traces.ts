import { randomBytes } from "node:crypto";
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { AgentEvent, EventDraft } from "../events/agent-event.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import * as names from "./genai-attributes.js";
import type { MaskedContent } from "./masked-content.js";
import { type SpanTargets, addSpanEvent } from "./run-span-events.js";
import { SpanNames } from "./span-names.js";
import { SpanScope } from "./span-scope.js";
import {
  type TraceScope,
  openCallScope,
  requestParent,
  scopeOfLogger,
  scopeOfSignal,
  setRunScope,
} from "./trace-scope.js";

/** The parts of a run's context the tracing worker reads (the worker's RunContext, structurally). */
export interface TracedRunContext {
  runId: string;
  definition: { id: string; description: string };
  events: EventPublisher;
  /** The run's signal: what runs for the run (its model calls, its CLI process) finds its span by it. */
  control: { signal: AbortSignal };
}

/** One traced run: its `invoke_agent` span, and the tool calls in flight under it. */
interface RunTrace {
  readonly span: Span;
  readonly context: Context;
  readonly traceId: string;
  readonly toolSpans: Map<string, Span>;
  /** Tool calls seen only as events (a CLI worker's): their spans end with the observation. */
  readonly eventToolSpans: Map<string, Span>;
  readonly approvalsRequested: Map<string, number>;
  /** Where its events land (made once per run: most events a run publishes land nowhere). */
  readonly targets: SpanTargets;
}

export interface RunTracesOptions {
  tracer: Tracer;
  /** Prompt, completion, task and tool content in spans (masked at export). */
  content: boolean;
  /** With content: how a chat span's conversation is encoded and masked, message by message. */
  maskedContent?: MaskedContent | undefined;
}

/**
 * The traces of a core's runs (OpenTelemetry GenAI conventions, see genai-attributes.ts): one
 * `invoke_agent <agent>` span per run from its creation to its final status, a child of the span
 * that created it (a sub-agent's tool call, or an incoming request's `traceparent`); under it the
 * `chat <model>` and `execute_tool <tool>` spans, and the run's events as span events. The spans are
 * derived from the run's typed events where they say enough, and from a few wrappers where they do
 * not (model calls, tool calls, the worker). Content stays out unless `content` is on.
 */
export class RunTraces {
  readonly tracer: Tracer;
  readonly content: boolean;
  readonly #maskedContent: MaskedContent | undefined;
  readonly #runs = new Map<string, RunTrace>();
  readonly #toolSpanNames = new SpanNames(names.OPERATION_EXECUTE_TOOL);
  /**
   * The record of a run this process did not create (resumed after a restart, taken over): set by
   * the composition root once the run manager exists.
   */
  records: (runId: string) => RunRecord | undefined = () => undefined;

  constructor(options: RunTracesOptions) {
    this.tracer = options.tracer;
    this.content = options.content;
    this.#maskedContent = options.content ? options.maskedContent : undefined;
  }

  /**
   * Starts a new run's span and puts its trace id in its first record: a child of the tool call
   * whose signal is `callSignal` (a sub-agent's), else of an incoming request's `traceparent`, else
   * of its parent run's span.
   */
  readonly stampNewRun = (record: RunRecord, callSignal?: AbortSignal): RunRecord => {
    const parent =
      scopeOfSignal(callSignal)?.context ??
      requestParent() ??
      (record.parent_run === undefined ? undefined : this.#runs.get(record.parent_run)?.context);
    const runTrace = this.#start(record, parent ?? ROOT_CONTEXT);
    const { traceId, spanId, traceFlags } = runTrace.span.spanContext();
    // The sampling decision of the run's first span is kept, so a resumed run takes it over.
    const sampled = (traceFlags & TraceFlags.SAMPLED) !== 0;
    return { ...record, trace_id: traceId, span_id: spanId, ...(sampled ? {} : { trace_sampled: false }) };
  };

  /**
   * Runs a worker inside its run's span: what the worker starts (model calls, tool calls, CLI
   * processes, hooks) is a child of it, and its events are read as they are published.
   */
  run<Context extends TracedRunContext, Outcome>(
    context: Context,
    work: (context: Context) => Promise<Outcome>,
  ): Promise<Outcome> {
    const runTrace = this.#runs.get(context.runId) ?? this.#resumed(context.runId);
    if (runTrace === undefined) return work(context);
    const inner = context.events;
    const events: EventPublisher = {
      publish: (draft) => {
        this.#observe(runTrace, draft, context.control.signal);
        inner.publish(draft);
      },
    };
    // No AsyncLocalStorage around the whole run (see trace-scope.ts): its scope is found by its signal.
    setRunScope(context.control.signal, this.#scope(runTrace.context, context.runId));
    return work({ ...context, events });
  }

  /**
   * Runs one tool call in an `execute_tool <tool>` span under its run's (the run whose signal is
   * `runSignal`). `work` is handed the signal the call's span is found by (the run's while the call
   * is the only one in flight, else one of its own, a child of the run's): what the call does with
   * it (its tool, its hooks, a sub-agent) finds the call's span by it. Untraced, `work` gets none.
   */
  async executeTool<Result extends { ok: boolean; output: string; code?: string }>(
    call: { callId: string; tool: string; argumentsJson: string },
    runId: string,
    runSignal: AbortSignal,
    work: (callSignal?: AbortSignal) => Promise<Result>,
  ): Promise<Result> {
    const runTrace = this.#runs.get(runId);
    const parent = runTrace?.context ?? scopeOfSignal(runSignal)?.context;
    if (parent === undefined) return work();
    const span = this.#toolSpan(call.tool, call.callId, parent);
    if (this.content) span.setAttribute(names.GEN_AI_TOOL_CALL_ARGUMENTS, call.argumentsJson);
    runTrace?.toolSpans.set(call.callId, span);
    const callScope = openCallScope(
      runSignal,
      new SpanScope({ tracer: this.tracer, parent, span, runId, content: this.#maskedContent }),
    );
    try {
      const result = await work(callScope.signal);
      const outcome = result.ok ? "ok" : result.code === "TOOL_DENIED" ? "denied" : "failed";
      span.setAttribute(names.AGENTD_TOOL_OUTCOME, outcome);
      if (!result.ok) {
        span.setAttribute(names.ERROR_TYPE, result.code ?? "TOOL_FAILED");
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (this.content) span.setAttribute(names.GEN_AI_TOOL_CALL_RESULT, result.output);
      return result;
    } catch (error) {
      span.setAttribute(names.AGENTD_TOOL_OUTCOME, "failed");
      failed(span, error);
      throw error;
    } finally {
      callScope.close();
      runTrace?.toolSpans.delete(call.callId);
      span.end();
    }
  }

  /** A run's final status (from the bus): its span ends with it. */
  readonly onEvent = (event: AgentEvent): void => {
    if (event.type !== "status" || event.run === null || !isTerminal(event.data.status)) return;
    const runTrace = this.#runs.get(event.run);
    if (runTrace === undefined) return;
    this.#runs.delete(event.run);
    const { data } = event;
    const { span } = runTrace;
    span.setAttribute(names.AGENTD_RUN_STATUS, data.status);
    if (data.reason !== undefined) span.setAttribute(names.AGENTD_RUN_REASON, data.reason);
    if (data.usage !== undefined) {
      span.setAttribute(names.GEN_AI_USAGE_INPUT_TOKENS, data.usage.prompt_tokens);
      span.setAttribute(names.GEN_AI_USAGE_OUTPUT_TOKENS, data.usage.completion_tokens);
    }
    if (data.cost_usd !== undefined) span.setAttribute(names.AGENTD_COST_USD, data.cost_usd);
    if (data.status === "failed") {
      span.setAttribute(names.ERROR_TYPE, data.reason ?? "failed");
      span.setStatus({ code: SpanStatusCode.ERROR, ...(data.message ? { message: data.message } : {}) });
    }
    for (const open of runTrace.eventToolSpans.values()) open.end();
    span.end();
  };

  /**
   * For the logger's mixin: the span of a line logged for a tool call or a CLI process (by the
   * logger `loggerInScope` made for it), else the trace of the run the line names (`run`).
   */
  readonly logFields = (mergeObject: object, _level?: number, logger?: unknown): Record<string, string> => {
    const scope = scopeOfLogger(logger);
    if (scope !== undefined) {
      const spanContext = trace.getSpanContext(scope.context);
      if (spanContext) return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
    }
    const run = (mergeObject as { run?: unknown }).run;
    const traceId = typeof run === "string" ? this.#runs.get(run)?.traceId : undefined;
    return traceId === undefined ? {} : { trace_id: traceId };
  };

  /** Ends the spans of runs still open (a shutdown): they are exported as they stand. */
  endOpenRuns(): void {
    for (const [runId, runTrace] of this.#runs) {
      runTrace.span.setAttribute(names.AGENTD_RUN_STATUS, "unfinished");
      for (const open of runTrace.eventToolSpans.values()) open.end();
      runTrace.span.end();
      this.#runs.delete(runId);
    }
  }

  #start(record: RunRecord, parent: Context, resumed = false): RunTrace {
    const span = this.tracer.startSpan(
      `${names.OPERATION_INVOKE_AGENT} ${record.agent}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [names.GEN_AI_OPERATION_NAME]: names.OPERATION_INVOKE_AGENT,
          [names.GEN_AI_PROVIDER_NAME]: "agentd",
          [names.GEN_AI_AGENT_ID]: record.agent,
          [names.GEN_AI_AGENT_NAME]: record.agent,
          [names.GEN_AI_CONVERSATION_ID]: record.id,
          [names.AGENTD_RUN_ID]: record.id,
          [names.AGENTD_RUN_TRIGGER]: record.trigger.kind,
          ...(record.parent_run === undefined ? {} : { [names.AGENTD_PARENT_RUN_ID]: record.parent_run }),
          ...(resumed ? { "agentd.run.resumed": true } : {}),
          ...(this.content ? { [names.AGENTD_RUN_TASK]: record.task } : {}),
        },
      },
      parent,
    );
    const toolSpans = new Map<string, Span>();
    const eventToolSpans = new Map<string, Span>();
    const runTrace: RunTrace = {
      span,
      context: trace.setSpan(parent, span),
      traceId: span.spanContext().traceId,
      toolSpans,
      eventToolSpans,
      approvalsRequested: new Map(),
      targets: {
        runSpan: span,
        toolSpan: (callId) =>
          callId === undefined ? undefined : (toolSpans.get(callId) ?? eventToolSpans.get(callId)),
      },
    };
    this.#runs.set(record.id, runTrace);
    return runTrace;
  }

  /**
   * A run this process did not create (resumed after a restart, or taken over from another node):
   * a new span in the trace its record names, a child of the run's first span (its `span_id`,
   * exported as `unfinished` by a daemon that stopped; missing from the trace after a crash), with
   * that span's sampling decision (`trace_sampled`).
   */
  #resumed(runId: string): RunTrace | undefined {
    const record = this.records(runId);
    if (record === undefined) return undefined;
    const parent =
      record.trace_id === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: record.trace_id,
            // Records written before span_id was kept: the trace, under a parent of its own.
            spanId: record.span_id ?? randomBytes(8).toString("hex"),
            // Not sampled at first (the caller's `traceparent` said so), not sampled resumed.
            traceFlags: record.trace_sampled === false ? TraceFlags.NONE : TraceFlags.SAMPLED,
            isRemote: true,
          });
    return this.#start(record, parent, true);
  }

  #scope(context: Context, runId: string): TraceScope {
    return this.#maskedContent === undefined
      ? { tracer: this.tracer, context, runId }
      : { tracer: this.tracer, context, runId, content: this.#maskedContent };
  }

  #toolSpan(tool: string, callId: string, parent: Context): Span {
    const span = this.tracer.startSpan(this.#toolSpanNames.of(tool), { kind: SpanKind.INTERNAL }, parent);
    // Set on the span, not handed to startSpan: the SDK copies and checks a start's attributes
    // object twice before the span checks each one again (no sampler reads them).
    span.setAttribute(names.GEN_AI_OPERATION_NAME, names.OPERATION_EXECUTE_TOOL);
    span.setAttribute(names.GEN_AI_TOOL_NAME, tool);
    span.setAttribute(names.GEN_AI_TOOL_CALL_ID, callId);
    span.setAttribute(names.GEN_AI_TOOL_TYPE, tool.startsWith("mcp__") ? "extension" : "function");
    return span;
  }

  /** One of the run's events, as it is published. */
  #observe(runTrace: RunTrace, draft: EventDraft, signal: AbortSignal): void {
    switch (draft.type) {
      case "action": {
        // A tool call the executor did not run (a CLI worker's own tools): a span from its events.
        if (runTrace.toolSpans.has(draft.data.call_id)) return;
        // While a CLI process runs, the run's signal finds its span (see traceStep).
        const parent = scopeOfSignal(signal)?.context ?? runTrace.context;
        const span = this.#toolSpan(draft.data.tool, draft.data.call_id, parent);
        if (this.content)
          span.setAttribute(names.GEN_AI_TOOL_CALL_ARGUMENTS, JSON.stringify(draft.data.arguments));
        runTrace.eventToolSpans.set(draft.data.call_id, span);
        return;
      }
      case "observation": {
        const span = runTrace.eventToolSpans.get(draft.data.call_id);
        if (span === undefined) return;
        runTrace.eventToolSpans.delete(draft.data.call_id);
        span.setAttribute(names.AGENTD_TOOL_OUTCOME, draft.data.ok ? "ok" : "failed");
        if (!draft.data.ok) span.setStatus({ code: SpanStatusCode.ERROR });
        if (this.content) span.setAttribute(names.GEN_AI_TOOL_CALL_RESULT, draft.data.output);
        span.end();
        return;
      }
      case "result":
        runTrace.span.setAttribute(names.AGENTD_WORKER, draft.data.worker);
        return;
      case "approval": {
        const { id, state } = draft.data;
        let wait: number | undefined;
        if (state === "requested") runTrace.approvalsRequested.set(id, performance.now());
        else {
          const requested = runTrace.approvalsRequested.get(id);
          runTrace.approvalsRequested.delete(id);
          if (requested !== undefined) wait = Math.round(performance.now() - requested);
        }
        addSpanEvent(draft, runTrace.targets, wait);
        return;
      }
      default:
        addSpanEvent(draft, runTrace.targets);
    }
  }
}

/** Marks a span failed with what was thrown. */
export function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  span.setAttribute(names.ERROR_TYPE, typeof code === "string" ? code : "Error");
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
