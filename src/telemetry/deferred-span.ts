import type {
  AttributeValue,
  Attributes,
  Context,
  Span,
  SpanKind,
  SpanStatus,
  Tracer,
} from "@opentelemetry/api";
import type { EndedSpans, HandedOverSpan } from "./ended-spans.js";

/**
 * A span the SDK starts when something first needs it (its context read for a child or a
 * `traceparent`, an event added, content recorded), or else once it has ended, with others
 * (EndedSpans), at the time it began: the SDK's work for a span then runs with other spans',
 * not after each stretch of the loop's own code, which costs it several times over (see
 * ended-spans.ts). Its times are the loop's own (`performance.now()` when it began and when it
 * ended), so a deferred start changes no timestamp.
 */
export class DeferredSpan implements HandedOverSpan {
  readonly #tracer: Tracer;
  readonly #name: string;
  readonly #kind: SpanKind;
  readonly #parent: Context;
  readonly #startTime = performance.now();
  /** Attributes set before the SDK span is started, handed to it when it is. */
  readonly #attributes: Attributes;
  readonly #ended: EndedSpans | undefined;
  #status: SpanStatus | undefined;
  #span: Span | undefined;
  #endTime = 0;

  constructor(options: {
    tracer: Tracer;
    name: string;
    kind: SpanKind;
    parent: Context;
    attributes: Attributes;
    /** Where it waits once ended, to be handed to the SDK with others (else it ends at once). */
    ended: EndedSpans | undefined;
  }) {
    const { tracer, name, kind, parent, attributes } = options;
    this.#ended = options.ended;
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

  /**
   * Ends the span now: the SDK span ends at once if it was started, else it waits in `ended` (when
   * given) to be started and ended with others, at the times recorded.
   */
  end(): void {
    // The end time is given: a span started at a given time would otherwise end at Date.now().
    const endTime = performance.now();
    if (this.#span !== undefined || this.#ended === undefined) this.started().end(endTime);
    else {
      this.#endTime = endTime;
      this.#ended.add(this);
    }
  }

  /** Starts and ends the SDK span at the times recorded (EndedSpans). */
  handOver(): void {
    this.started().end(this.#endTime);
  }
}
