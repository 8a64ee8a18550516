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
// The propagator's own module, not the package's index: that loads the whole of @opentelemetry/core
// and the semantic conventions (tens of milliseconds at every start, traces on or off).
import { W3CTraceContextPropagator } from "@opentelemetry/core/build/src/trace/W3CTraceContextPropagator.js";
import type { MaskedContent } from "./masked-content.js";

/**
 * What the code running for a run (its worker, a tool call, a hook) is part of: the span it
 * runs in, and the tracer that makes its child spans. A run's own scope is found by its signal
 * (`scopeOfSignal`); a tool call's and a CLI process's are held in an AsyncLocalStorage while they
 * run, so a hook, `http_request`, an MCP call or a sub-agent finds the `traceparent` to pass on
 * without being handed it. Nothing is held when traces are off: every reader then gets `undefined`
 * at the cost of a lookup.
 */
export interface TraceScope {
  readonly context: Context;
  readonly tracer: Tracer;
  /** The run it belongs to. */
  readonly runId?: string;
  /** With content on: how its model calls' conversations are encoded and masked. */
  readonly content?: MaskedContent;
}

const propagator = new W3CTraceContextPropagator();

/**
 * An AsyncLocalStorage that is enabled only while some `run` of it is in flight. On Node 20 an
 * enabled AsyncLocalStorage installs promise hooks that every promise of the process pays for (the
 * model client's streaming makes thousands a round): a traced run's loop must not pay that, so
 * the storage holds the scopes of tool calls and CLI processes only, and is disabled again when
 * the last one settles (what they left behind then reads no scope, and needs none).
 */
class ScopedStorage<Store> {
  readonly #storage = new AsyncLocalStorage<Store>();
  #inFlight = 0;

  run<Result>(store: Store, work: () => Result): Result {
    this.#inFlight += 1;
    let result: Result;
    try {
      result = this.#storage.run(store, work);
    } catch (error) {
      this.#settled();
      throw error;
    }
    if (result instanceof Promise) {
      result.then(
        () => this.#settled(),
        () => this.#settled(),
      );
    } else this.#settled();
    return result;
  }

  getStore(): Store | undefined {
    return this.#inFlight === 0 ? undefined : this.#storage.getStore();
  }

  #settled(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0) this.#storage.disable();
  }
}

const callScopes = new ScopedStorage<TraceScope>();
/** Each traced run's own scope, by the run's signal (the model calls and the CLI worker find it so). */
const runScopes = new WeakMap<AbortSignal, TraceScope>();

/** Makes `scope` the scope of the run whose signal is `signal` (until `signal` is collected). */
export function setRunScope(signal: AbortSignal, scope: TraceScope): void {
  runScopes.set(signal, scope);
}

/** The scope of the run whose signal is `signal`, if it is traced. */
export function scopeOfSignal(signal: AbortSignal | undefined): TraceScope | undefined {
  return signal === undefined ? undefined : runScopes.get(signal);
}

/** Runs `work` inside `scope` (a tool call's, a CLI process's): what it starts, awaits included, sees it. */
export function runInTraceScope<Result>(scope: TraceScope, work: () => Result): Result {
  return callScopes.run(scope, work);
}

/**
 * The scope the caller runs in: its tool call's or CLI process's, else its run's (by signal), if
 * any. A sub-agent's run is started inside its parent's tool call and inherits that call's scope:
 * when the signal names another run, the run's own scope wins.
 */
export function currentTraceScope(signal?: AbortSignal): TraceScope | undefined {
  const call = callScopes.getStore();
  const run = scopeOfSignal(signal);
  if (run !== undefined && call?.runId !== run.runId) return run;
  return call ?? run;
}

/**
 * The W3C trace context headers of the current span (`traceparent`, and `tracestate` when set),
 * for a child process's environment or an outgoing request; empty outside any traced run.
 */
export function traceContextHeaders(signal?: AbortSignal): Record<string, string> {
  const scope = currentTraceScope(signal);
  if (scope === undefined) return {};
  const carrier: Record<string, string> = {};
  propagator.inject(scope.context, carrier, defaultTextMapSetter);
  return carrier;
}

/** The same as environment variables (`TRACEPARENT`, `TRACESTATE`), the convention CLI tools read. */
export function traceContextEnvironment(signal?: AbortSignal): Record<string, string> {
  const headers = traceContextHeaders(signal);
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
const requestParents = new ScopedStorage<Context>();

/** Runs `work` with the parent context of an incoming request (see remoteParentOf). */
export function withRequestParent<Result>(parent: Context | undefined, work: () => Result): Result {
  return parent === undefined ? work() : requestParents.run(parent, work);
}

/** The parent for a run created now: the current span (a sub-agent's tool call), or a request's. */
export function parentForNewRun(): Context | undefined {
  return callScopes.getStore()?.context ?? requestParents.getStore();
}

/**
 * Runs `work` in a child span of the current one (a CLI worker's process in the run whose signal
 * is `signal`, say); without a traced run around it, just runs it. The span ends when `work`
 * settles, in error when it throws.
 */
export async function traceStep<Result>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<Result>,
  signal?: AbortSignal,
): Promise<Result> {
  const scope = currentTraceScope(signal);
  if (scope === undefined) return work(undefined);
  const span = scope.tracer.startSpan(name, { attributes }, scope.context);
  try {
    return await callScopes.run({ ...scope, context: trace.setSpan(scope.context, span) }, () => work(span));
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
