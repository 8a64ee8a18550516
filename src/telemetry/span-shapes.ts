import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { GEN_AI_OPERATION_NAME } from "./genai-attributes.js";

/** At most this many spans are kept (one per operation and status). */
const MAX_KEPT = 12;

/**
 * Keeps one exported span per kind (operation name and status) alive until the next of its kind is
 * exported. V8 compiles the SDK's span code (attributes, events, the processor, the masking) for
 * the hidden classes of the span objects it sees; when a full garbage collection finds no object of
 * those classes left (between runs, once a batch was sent), it drops them and throws that code
 * away, and the next run pays for compiling it again (about 20 functions, on the compiler thread
 * and in the slower code meanwhile). One live span of each kind keeps the classes, and the code.
 */
export class SpanShapes {
  readonly #kept = new Map<string, ReadableSpan>();

  /** Keeps, for each kind in `spans`, its last span (replacing the one kept before). */
  keep(spans: readonly ReadableSpan[]): void {
    for (const span of spans) {
      const key = `${String(span.attributes[GEN_AI_OPERATION_NAME])} ${span.status.code}`;
      if (this.#kept.size >= MAX_KEPT && !this.#kept.has(key)) continue;
      this.#kept.set(key, span);
    }
  }

  /** How many spans are kept. */
  get size(): number {
    return this.#kept.size;
  }
}
