import type { Attributes } from "@opentelemetry/api";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

/** Whether a span's attribute holds a value masked where it was recorded, still valid (MaskedContent). */
export type AlreadyMasked = (span: object, key: string, value: unknown) => boolean;

/**
 * An exporter that masks every string a span carries (its name, attributes, events, links and
 * status message) with the vault's redactor before handing the batch on: whatever a span was
 * given, a secret value never leaves the daemon. It runs on the batch, off the run's own path.
 * An attribute masked where it was recorded (`alreadyMasked`: a chat span's conversation) is
 * passed on as it is.
 */
export class MaskingSpanExporter implements SpanExporter {
  readonly #next: SpanExporter;
  readonly #redact: (text: string) => string;
  readonly #alreadyMasked: AlreadyMasked;
  readonly #lengthLimit: number;
  #redactOnce: (text: string) => string;

  constructor(
    next: SpanExporter,
    redact: (text: string) => string,
    alreadyMasked?: AlreadyMasked,
    lengthLimit = Infinity,
  ) {
    this.#next = next;
    this.#redact = redact;
    this.#alreadyMasked = alreadyMasked ?? (() => false);
    this.#lengthLimit = lengthLimit;
    this.#redactOnce = redact;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    // Most strings repeat from span to span (names, ids, models, outcomes): each distinct one is
    // masked once per batch. Per batch only, so a secret the vault learned since is never missed.
    const masked = new Map<string, string>();
    this.#redactOnce = (text) => {
      let result = masked.get(text);
      if (result === undefined) {
        result = this.#redact(text);
        masked.set(text, result);
      }
      return result;
    };
    try {
      for (const span of spans) this.#mask(span);
    } finally {
      this.#redactOnce = this.#redact;
    }
    this.#next.export(spans, resultCallback);
  }

  shutdown(): Promise<void> {
    return this.#next.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#next.forceFlush?.() ?? Promise.resolve();
  }

  // The spans have ended: nothing else reads them once the batch is handed over, so they are
  // masked in place rather than copied.
  #mask(span: ReadableSpan): void {
    const writable = span as { -readonly [Key in keyof ReadableSpan]: ReadableSpan[Key] };
    writable.name = this.#redactOnce(span.name);
    this.#maskAttributes(span.attributes, span);
    for (const event of span.events) {
      (event as { name: string }).name = this.#redactOnce(event.name);
      if (event.attributes) this.#maskAttributes(event.attributes);
    }
    for (const link of span.links) if (link.attributes) this.#maskAttributes(link.attributes);
    if (span.status.message !== undefined) {
      writable.status = { ...span.status, message: this.#redactOnce(span.status.message) };
    }
  }

  #maskAttributes(attributes: Attributes, span?: ReadableSpan): void {
    // for…in, not Object.entries: no array per attribute (the SDK's attribute objects are plain).
    for (const key in attributes) {
      const value = attributes[key];
      if (typeof value === "string") {
        const masked =
          span === undefined || !this.#alreadyMasked(span, key, value) ? this.#redactOnce(value) : value;
        attributes[key] = masked.length > this.#lengthLimit ? masked.slice(0, this.#lengthLimit) : masked;
      } else if (Array.isArray(value))
        attributes[key] = value.map((item: unknown) => {
          if (typeof item !== "string") return item;
          const masked = this.#redactOnce(item);
          return masked.length > this.#lengthLimit ? masked.slice(0, this.#lengthLimit) : masked;
        }) as string[] | number[];
    }
  }
}
