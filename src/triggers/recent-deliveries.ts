import type { Clock } from "../clock/clock.js";

/** How long a delivery is remembered: the window of the Idempotency-Key store. */
const WINDOW_MILLISECONDS = 24 * 60 * 60 * 1_000;
/** Deliveries remembered at most; past it the oldest are forgotten first. */
const MAX_REMEMBERED = 20_000;

/**
 * The runs recent GitHub deliveries started, by the digest of their signed body, in memory for a
 * day: GitHub's signature covers the body and not `X-GitHub-Delivery`, so a captured delivery sent
 * again under a new id is recognised by its body and answered as the duplicate it is.
 */
export class RecentDeliveries {
  readonly #clock: Clock;
  readonly #runs = new Map<string, { run: string; at: number }>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  runOf(key: string): string | undefined {
    const entry = this.#runs.get(key);
    if (entry === undefined) return undefined;
    if (this.#clock.now() - entry.at >= WINDOW_MILLISECONDS) {
      this.#runs.delete(key);
      return undefined;
    }
    return entry.run;
  }

  remember(key: string, run: string): void {
    if (this.#runs.has(key)) return;
    if (this.#runs.size >= MAX_REMEMBERED) {
      const oldest = this.#runs.keys().next();
      if (oldest.done !== true) this.#runs.delete(oldest.value);
    }
    this.#runs.set(key, { run, at: this.#clock.now() });
  }
}
