import type { Clock } from "../clock/clock.js";

/** A trigger's allowance: at most `runs` starts in any `per` milliseconds. */
export interface RateLimit {
  runs: number;
  per: number;
}

/** The answer for one start: allowed, or refused with the seconds until a start is allowed again. */
export type RateVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Triggers whose start times are kept; past it the oldest-touched one is forgotten. */
const MAX_TRACKED = 10_000;

/**
 * A sliding window per trigger, on the daemon's clock: the start times of the last `per`
 * milliseconds are kept, and a start past `runs` of them is refused until the oldest leaves the
 * window (that wait is the `retry-after`). Only starts count: a refused, filtered or duplicate
 * delivery costs the sender nothing here.
 */
export class DeliveryRateLimit {
  readonly #clock: Clock;
  readonly #starts = new Map<string, number[]>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Takes one start of `key` if the limit allows it. */
  take(key: string, limit: RateLimit): RateVerdict {
    const now = this.#clock.now();
    const kept = (this.#starts.get(key) ?? []).filter((time) => time > now - limit.per);
    if (kept.length >= limit.runs) {
      const oldest = kept[0] as number;
      this.#starts.set(key, kept);
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((oldest + limit.per - now) / 1_000)),
      };
    }
    kept.push(now);
    this.#starts.delete(key);
    if (this.#starts.size >= MAX_TRACKED) {
      const first = this.#starts.keys().next();
      if (first.done !== true) this.#starts.delete(first.value);
    }
    this.#starts.set(key, kept);
    return { allowed: true };
  }

  /** Gives back a start taken for a run that could not be made. */
  giveBack(key: string): void {
    this.#starts.get(key)?.pop();
  }
}
