import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "../logging/logger.js";

/**
 * ExportResultCode.SUCCESS, written out: this file is loaded whether traces are on or not, and the
 * SDK's packages only when they are.
 */
const SUCCESS = 0;
/** At most one warning a minute while exports keep failing. */
const WARN_EVERY_MILLISECONDS = 60_000;
/** A collector's answer can be long (up to 4 MB): the log keeps its start. */
const MAX_MESSAGE_LENGTH = 300;

/**
 * Says in the daemon's log when spans could not be exported (a wrong API key's 401, a collector
 * that is down or does not answer): the SDK drops them silently, and runs go on unaffected, so an
 * operator would otherwise only see traces missing. A warning at the first failure, then at most
 * one a minute counting the batches lost since, and a line when exports succeed again.
 */
export class ExportFailures {
  readonly #now: () => number;
  #logger: Logger | undefined;
  #failing = false;
  #lastWarning = Number.NEGATIVE_INFINITY;
  #lostSpans = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Where the warnings go (the daemon's logger, once it exists). */
  attach(logger: Logger): void {
    this.#logger = logger;
  }

  /** `next`, reporting each batch it fails to export. */
  watching(next: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], resultCallback: (result: ExportResult) => void) =>
        next.export(spans, (result) => {
          this.#settled(result, spans.length);
          resultCallback(result);
        }),
      shutdown: () => next.shutdown(),
      forceFlush: () => next.forceFlush?.() ?? Promise.resolve(),
    };
  }

  #settled(result: ExportResult, spans: number): void {
    if ((result.code as number) === SUCCESS) {
      if (this.#failing) this.#logger?.info("exporting traces again");
      this.#failing = false;
      this.#lastWarning = Number.NEGATIVE_INFINITY;
      return;
    }
    this.#failing = true;
    this.#lostSpans += spans;
    const now = this.#now();
    if (now - this.#lastWarning < WARN_EVERY_MILLISECONDS) return;
    this.#lastWarning = now;
    const message = result.error?.message ?? "unknown error";
    this.#logger?.warn(
      {
        error: message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH)}…` : message,
        lost_spans: this.#lostSpans,
      },
      "traces not exported: the collector refused them or did not answer (runs go on; see docs/telemetry.md)",
    );
    this.#lostSpans = 0;
  }
}
