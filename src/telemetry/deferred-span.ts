import type {
  AttributeValue,
  Attributes,
  Context,
  Span,
  SpanKind,
  SpanStatus,
  Tracer,
} from "@opentelemetry/api";

/**
 * A span the SDK starts when something first needs it (its context read for a child or a
 * `traceparent`, an event added), or else when it ends, at the time it began: all of its SDK work
 * then runs in one burst. Inside the loop a span's start, its attributes and its end each ran
 * after a stretch of the loop's own code had pushed the SDK's code and objects out of the
 * processor's caches, and paid for it several times over (a tool span's `startSpan` took 13–14 µs
 * at the median there, 2–4 µs in a burst). Its times are the loop's own (`performance.now()` when
 * it began and when it ended), so a deferred start changes no timestamp.
 */
export class DeferredSpan {
  readonly #tracer: Tracer;
  readonly #name: string;
  readonly #kind: SpanKind;
  readonly #parent: Context;
  readonly #startTime = performance.now();
  /** Attributes set before the SDK span is started, handed to it when it is. */
  readonly #attributes: Attributes;
  #status: SpanStatus | undefined;
  #span: Span | undefined;

  constructor(tracer: Tracer, name: string, kind: SpanKind, parent: Context, attributes: Attributes) {
    this.#tracer = tracer;
    this.#name = name;
    this.#kind = kind;
    this.#parent = parent;
    this.#attributes = attributes;
  }

  /** The SDK span, started now (at the time this span began) if it was not yet. */
  started(): Span {
    if (this.#span !== undefined) return this.#span;
    const span = this.#tracer.startSpan(
      this.#name,
      { kind: this.#kind, startTime: this.#startTime },
      this.#parent,
    );
    // Set on the span, not handed to startSpan: the SDK copies and checks a start's attributes
    // object twice before the span checks each one again (no sampler reads them).
    span.setAttributes(this.#attributes);
    if (this.#status !== undefined) span.setStatus(this.#status);
    this.#span = span;
    return span;
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (this.#span === undefined) this.#attributes[key] = value;
    else this.#span.setAttribute(key, value);
  }

  setStatus(status: SpanStatus): void {
    if (this.#span === undefined) this.#status = status;
    else this.#span.setStatus(status);
  }

  /** Ends the span now (starting it first if nothing needed it before). */
  end(): void {
    // The end time is given: a span started at a given time would otherwise end at Date.now().
    this.started().end(performance.now());
  }
}
