import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
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
 * runs in, and the tracer that makes its child spans. Every scope is found by the signal the code
 * is handed: a run's by the run's signal (`setRunScope`), a tool call's by its run's signal while it
 * runs, or by a signal of its own when calls run side by side (`openCallScope`), a CLI process's
 * by its run's signal while it runs (`traceStep`). So a hook, `http_request`, an MCP call, a
 * sub-agent or a log line finds the span to pass on from what it already carries. No
 * AsyncLocalStorage on a run's path: on Node 20 each time one is enabled or disabled its promise
 * hooks cost 100–200 µs of the main thread, and enabled they tax every promise of the process.
 * Nothing is registered when traces are off: every reader then gets `undefined` at the cost of a
 * lookup.
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
 * An AsyncLocalStorage that is enabled only while some `run` of it is in flight (on Node 20 an
 * enabled one installs promise hooks every promise of the process pays for). It holds only the
 * parent an incoming request names, per request: never anything of a run's loop.
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

/** The scopes of traced runs (by the run's signal) and of their tool calls (by the call's signal). */
const scopes = new WeakMap<AbortSignal, TraceScope>();

/** Makes `scope` the scope of the run whose signal is `signal` (until `signal` is collected). */
export function setRunScope(signal: AbortSignal, scope: TraceScope): void {
  scopes.set(signal, scope);
}

/**
 * The scope of the code handed `signal`: its tool call's (while the call runs), else its run's (or
 * the run's CLI process's while one runs), if it is traced.
 */
export function scopeOfSignal(signal: AbortSignal | undefined): TraceScope | undefined {
  return signal === undefined ? undefined : scopes.get(signal);
}

/** The signal a tool call's scope is found by, and how to let go of it once the call settled. */
export interface CallScope {
  /**
   * Aborted with the run's signal, with its reason; `scopeOfSignal` finds the call's scope by it
   * while the call is open. The run's own signal when the call is the only one in flight.
   */
  readonly signal: AbortSignal;
  /** Gives the run's signal back to the run's scope, or stops listening to it. */
  close(): void;
}

/** Run signals lent to the one tool call in flight under each (their scope is that call's). */
const lentSignals = new WeakSet<AbortSignal>();

/** The signals of side-by-side tool calls under each run's signal: one listener per run aborts them. */
const callSignals = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Opens a tool call's scope. A call alone in its run (most are: a round's calls run in order) is
 * lent the run's signal, which finds the call's scope until the call closes it: a new AbortSignal
 * costs several microseconds of the main thread (its EventTarget's maps, a change of prototype),
 * most of what a call's scope cost, and a tool of an untraced run is handed the run's signal too.
 * A call that starts while another is in flight (side-by-side sub-agent calls) gets a signal of
 * its own, a child of the run's, so each finds its own span. What the call is handed the signal
 * for (its tool, its hooks, a sub-agent it starts) finds the call's span by it.
 */
export function openCallScope(runSignal: AbortSignal, scope: TraceScope): CallScope {
  if (!lentSignals.has(runSignal)) return lendRunSignal(runSignal, scope);
  const controller = new AbortController();
  scopes.set(controller.signal, scope);
  if (runSignal.aborted) {
    controller.abort(runSignal.reason);
    return { signal: controller.signal, close: () => undefined };
  }
  let open = callSignals.get(runSignal);
  if (open === undefined) {
    const calls = new Set<AbortController>();
    open = calls;
    callSignals.set(runSignal, calls);
    // One listener per run, not one per call: adding and removing an EventTarget listener for
    // every call would cost about what the call's signal does.
    runSignal.addEventListener(
      "abort",
      () => {
        for (const call of calls) call.abort(runSignal.reason);
        calls.clear();
      },
      { once: true },
    );
  }
  const calls = open;
  calls.add(controller);
  return { signal: controller.signal, close: () => calls.delete(controller) };
}

/** The run's signal finds `scope` until the call closes; then the scope it found before. */
function lendRunSignal(runSignal: AbortSignal, scope: TraceScope): CallScope {
  const before = scopes.get(runSignal);
  lentSignals.add(runSignal);
  scopes.set(runSignal, scope);
  return {
    signal: runSignal,
    close: () => {
      lentSignals.delete(runSignal);
      if (scopes.get(runSignal) !== scope) return;
      if (before === undefined) scopes.delete(runSignal);
      else scopes.set(runSignal, before);
    },
  };
}

/** Where a logger made by `loggerInScope` keeps its scope (its children inherit it). */
const LOGGER_SCOPE = Symbol("agentd.traceScope");

/**
 * A logger whose lines carry the span of `scope` (`trace_id`, `span_id`, added by the mixin
 * `RunTraces.logFields`): what code running for a tool call or a CLI process logs with. Without a
 * scope (traces off, or not traced), `logger` itself.
 */
export function loggerInScope<Logged extends { child(bindings: Record<string, never>): Logged }>(
  logger: Logged,
  scope: TraceScope | undefined,
): Logged {
  if (scope === undefined) return logger;
  const scoped = logger.child({});
  Object.defineProperty(scoped, LOGGER_SCOPE, { value: scope });
  return scoped;
}

/** The scope of a logger made by `loggerInScope` (or one of its children), if any. */
export function scopeOfLogger(logger: unknown): TraceScope | undefined {
  return typeof logger === "object" && logger !== null
    ? (logger as { [LOGGER_SCOPE]?: TraceScope })[LOGGER_SCOPE]
    : undefined;
}

/**
 * The W3C trace context headers of the span of the code handed `signal` (`traceparent`, and
 * `tracestate` when set), for a child process's environment or an outgoing request; empty outside
 * any traced run.
 */
export function traceContextHeaders(signal?: AbortSignal): Record<string, string> {
  const scope = scopeOfSignal(signal);
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

/**
 * Runs `work` with the parent context of an incoming request (see remoteParentOf). Per HTTP request,
 * off the loop's path: the storage is enabled only while such a request is being answered.
 */
export function withRequestParent<Result>(parent: Context | undefined, work: () => Result): Result {
  return parent === undefined ? work() : requestParents.run(parent, work);
}

/** The parent an incoming request being answered names, for a run it creates. */
export function requestParent(): Context | undefined {
  return requestParents.getStore();
}

/**
 * Runs `work` in a child span of the scope of the run whose signal is `signal` (a CLI worker's
 * process); without a traced run, just runs it. While `work` runs the step is what the run's
 * signal finds (a run runs one such step at a time), and `work` is handed its scope. The span ends
 * when `work` settles, in error when it throws.
 */
export async function traceStep<Result>(
  name: string,
  attributes: Attributes,
  work: (step: TraceScope | undefined) => Promise<Result>,
  signal?: AbortSignal,
): Promise<Result> {
  const scope = scopeOfSignal(signal);
  if (scope === undefined || signal === undefined) return work(undefined);
  const span = scope.tracer.startSpan(name, { attributes }, scope.context);
  const step: TraceScope = { ...scope, context: trace.setSpan(scope.context, span) };
  scopes.set(signal, step);
  try {
    return await work(step);
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    if (scopes.get(signal) === step) scopes.set(signal, scope);
    span.end();
  }
}
