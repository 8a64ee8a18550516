import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * What the code running for a run (its worker, a tool call, a hook) is part of: the span it
 * runs in, and the tracer that makes its child spans. Held in an AsyncLocalStorage, so a CLI
 * worker, a hook or `http_request` finds the `traceparent` to pass on without being handed it.
 * Nothing is held when traces are off: every reader then gets `undefined` at the cost of a lookup.
 */
export interface TraceScope {
  readonly context: Context;
  readonly tracer: Tracer;
  /** The run it belongs to. */
  readonly runId?: string;
}

const scopes = new AsyncLocalStorage<TraceScope>();
const propagator = new W3CTraceContextPropagator();

/** Runs `work` inside `scope`: what it starts (awaits included) sees the scope. */
export function runInTraceScope<Result>(scope: TraceScope, work: () => Result): Result {
  return scopes.run(scope, work);
}

/** The scope the caller runs in, if any. */
export function currentTraceScope(): TraceScope | undefined {
  return scopes.getStore();
}

/**
 * The W3C trace context headers of the current span (`traceparent`, and `tracestate` when set),
 * for a child process's environment or an outgoing request; empty outside any traced run.
 */
export function traceContextHeaders(): Record<string, string> {
  const scope = scopes.getStore();
  if (scope === undefined) return {};
  const carrier: Record<string, string> = {};
  propagator.inject(scope.context, carrier, defaultTextMapSetter);
  return carrier;
}

/** The same as environment variables (`TRACEPARENT`, `TRACESTATE`), the convention CLI tools read. */
export function traceContextEnvironment(): Record<string, string> {
  const headers = traceContextHeaders();
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
}

/**
 * The parent an incoming request names in its `traceparent` (and `tracestate`) header, or undefined
 * when it names none or a malformed one (then the run starts a trace of its own).
 */
export function remoteParentOf(headers: Record<string, string | string[] | undefined>): Context | undefined {
  const carrier: Record<string, string> = {};
  for (const name of ["traceparent", "tracestate"]) {
    const value = headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    if (typeof text === "string") carrier[name] = text;
  }
  if (carrier.traceparent === undefined) return undefined;
  const context = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  return trace.getSpanContext(context) === undefined ? undefined : context;
}

/** The parent a request's `traceparent` names while `work` runs: runs it creates are its children. */
const requestParents = new AsyncLocalStorage<Context>();

/** Runs `work` with the parent context of an incoming request (see remoteParentOf). */
export function withRequestParent<Result>(parent: Context | undefined, work: () => Result): Result {
  return parent === undefined ? work() : requestParents.run(parent, work);
}

/** The parent for a run created now: the current span (a sub-agent's tool call), or a request's. */
export function parentForNewRun(): Context | undefined {
  return scopes.getStore()?.context ?? requestParents.getStore();
}

/**
 * Runs `work` in a child span of the current one (a CLI worker's process, say); without a traced
 * run around it, just runs it. The span ends when `work` settles, in error when it throws.
 */
export async function traceStep<Result>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<Result>,
): Promise<Result> {
  const scope = scopes.getStore();
  if (scope === undefined) return work(undefined);
  const span = scope.tracer.startSpan(name, { attributes }, scope.context);
  try {
    return await scopes.run({ ...scope, context: trace.setSpan(scope.context, span) }, () => work(span));
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    span.end();
  }
}
