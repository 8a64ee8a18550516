import { CircuitBreaker, type CircuitBreakerSettings } from "./circuit-breaker.js";

/**
 * One circuit breaker per endpoint and model: a model that keeps failing opens only its own
 * circuit, so its fallback models and other agents' models on the same endpoint still get calls.
 */
export class CircuitBreakers {
  readonly #endpoint: string;
  readonly #settings: CircuitBreakerSettings;
  readonly #byModel = new Map<string, CircuitBreaker>();

  constructor(endpoint: string, settings: CircuitBreakerSettings) {
    this.#endpoint = endpoint;
    this.#settings = settings;
  }

  /** The breaker of `model` on this endpoint, made closed on first use. */
  of(model: string): CircuitBreaker {
    let breaker = this.#byModel.get(model);
    if (!breaker) {
      breaker = new CircuitBreaker(this.#endpoint, model, this.#settings);
      this.#byModel.set(model, breaker);
    }
    return breaker;
  }
}
