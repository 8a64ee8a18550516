import { LlmError } from "./llm-error.js";

export interface CircuitBreakerSettings {
  /** Consecutive failed calls that open the circuit. */
  failureThreshold: number;
  /** How long it stays open before one trial call is let through. */
  cooldownMilliseconds: number;
  now?: () => number;
}

/**
 * The circuit breaker of one model on one endpoint: closed while calls succeed; open after `failureThreshold`
 * consecutive failures, failing calls at once with LLM_CIRCUIT_OPEN; after the cooldown, one
 * trial call (half-open) closes it on success or reopens it on failure.
 */
export class CircuitBreaker {
  readonly #endpoint: string;
  readonly #model: string;
  readonly #settings: CircuitBreakerSettings;
  readonly #now: () => number;
  #consecutiveFailures = 0;
  #openedAt: number | undefined;
  #trialInFlight = false;

  constructor(endpoint: string, model: string, settings: CircuitBreakerSettings) {
    this.#endpoint = endpoint;
    this.#model = model;
    this.#settings = settings;
    this.#now = settings.now ?? Date.now;
  }

  get state(): "closed" | "open" | "half_open" {
    if (this.#openedAt === undefined) return "closed";
    return this.#now() - this.#openedAt >= this.#settings.cooldownMilliseconds ? "half_open" : "open";
  }

  /** Throws LLM_CIRCUIT_OPEN when a call may not go out now. */
  acquire(): void {
    const state = this.state;
    if (state === "closed") return;
    if (state === "half_open" && !this.#trialInFlight) {
      this.#trialInFlight = true;
      return;
    }
    const openedAt = this.#openedAt ?? this.#now();
    const retryInMilliseconds = Math.max(0, openedAt + this.#settings.cooldownMilliseconds - this.#now());
    const retryInSeconds = Math.ceil(retryInMilliseconds / 1000);
    throw new LlmError(
      "LLM_CIRCUIT_OPEN",
      `model ${this.#model} at ${this.#endpoint} failed ${this.#consecutiveFailures} times in a row; calls to it are paused for ${retryInSeconds} s more (llm.circuit_breaker.cooldown)`,
      { endpoint: this.#endpoint, model: this.#model },
      {
        // Not on this call: the run's fallback models are tried instead.
        retryable: false,
        hint:
          `the errors before this one say why the calls failed: fix that (is ${this.#endpoint} up, does it serve ${this.#model}?) ` +
          `and run again after ${retryInSeconds} s, when agentd tries the model again; fallback_models in the agent file are tried meanwhile`,
        details: { retry_in_ms: retryInMilliseconds },
      },
    );
  }

  succeeded(): void {
    this.#consecutiveFailures = 0;
    this.#openedAt = undefined;
    this.#trialInFlight = false;
  }

  /** A call that ended neither way (stopped by its run): frees the trial slot without judging. */
  released(): void {
    this.#trialInFlight = false;
  }

  failed(): void {
    this.#consecutiveFailures += 1;
    const trialFailed = this.#trialInFlight;
    this.#trialInFlight = false;
    if (trialFailed || this.#consecutiveFailures >= this.#settings.failureThreshold)
      this.#openedAt = this.#now();
  }
}
