/** One attempt at a model call, as metrics see it. */
export interface LlmCallReport {
  endpoint: string;
  model: string;
  /** `ok`, or the error code of the failed attempt (LLM_HTTP, LLM_TIMEOUT, LLM_CIRCUIT_OPEN…). */
  outcome: string;
  durationMilliseconds: number;
  /** True when another attempt follows (a retry after back-off). */
  retried: boolean;
}

/** What a model client tells observers: each attempt, and its circuit breaker's state. */
export interface LlmTelemetry {
  onCall(listener: (report: LlmCallReport) => void): () => void;
  /** The circuit breaker of one model of the endpoint. */
  breakerState(model: string): "closed" | "open" | "half_open";
}

/** A tiny synchronous feed of call reports; a failing listener never affects the call. */
export class LlmCallFeed {
  readonly #listeners = new Set<(report: LlmCallReport) => void>();

  onCall(listener: (report: LlmCallReport) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Whether anyone listens: a caller with nothing to tell need not build the report. */
  get listened(): boolean {
    return this.#listeners.size > 0;
  }

  report(report: LlmCallReport): void {
    for (const listener of this.#listeners) {
      try {
        listener(report);
      } catch {
        // Metrics must never break a run.
      }
    }
  }
}
