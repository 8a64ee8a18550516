import { type Context, type Span, type Tracer, trace } from "@opentelemetry/api";
import type { MaskedContent } from "./masked-content.js";
import type { TraceScope } from "./trace-scope.js";

/**
 * The scope of the code running in one span (a tool call): its context, the parent's with the span
 * set, is made the first time something reads it (a hook, a sub-agent, an outgoing request, a log
 * line). Most tool calls read none, and making a context copies its parent's entries.
 */
export class SpanScope implements TraceScope {
  readonly tracer: Tracer;
  readonly runId: string;
  readonly content: MaskedContent | undefined;
  readonly #parent: Context;
  readonly #span: Span;
  #context: Context | undefined;

  constructor(options: {
    tracer: Tracer;
    parent: Context;
    span: Span;
    runId: string;
    content: MaskedContent | undefined;
  }) {
    this.tracer = options.tracer;
    this.runId = options.runId;
    this.content = options.content;
    this.#parent = options.parent;
    this.#span = options.span;
  }

  get context(): Context {
    return (this.#context ??= trace.setSpan(this.#parent, this.#span));
  }
}
