import type { Clock } from "../clock/clock.js";

/** A trigger's allowance: at most `runs` starts in any `per` milliseconds. */
export interface RateLimit {
  runs: number;
  per: number;
}

/**
 * The answer for one start: allowed (with the start taken, to give back if no run is made), or
 * refused with the seconds until a start is allowed again.
 */
export type RateVerdict = { allowed: true; start: string } | { allowed: false; retryAfterSeconds: number };

/** Where webhook triggers' starts are counted: this daemon's memory, or a cluster's store. */
export interface TriggerRateLimit {
  /** Takes one start of `key` if the limit allows it. */
  take(key: string, limit: RateLimit): Promise<RateVerdict>;
  /** Gives back a start taken for a run that could not be made (or that another node made). */
  giveBack(key: string, start: string): Promise<void>;
}

/** Triggers whose start times are kept; past it the oldest-touched one is forgotten. */
const MAX_TRACKED = 10_000;

/** The seconds until the oldest start in the window leaves it (at least 1): a refusal's `retry-after`. */
export function retryAfterSeconds(oldest: number, limit: RateLimit, now: number): number {
  return Math.max(1, Math.ceil((oldest + limit.per - now) / 1_000));
}

/**
 * A sliding window per trigger, on the daemon's clock, in this daemon's memory: the start times of
 * the last `per` milliseconds are kept, and a start past `runs` of them is refused until the oldest
 * leaves the window (that wait is the `retry-after`). Only starts count: a refused, filtered or
 * duplicate delivery costs the sender nothing here.
 */
export class DeliveryRateLimit implements TriggerRateLimit {
  readonly #clock: Clock;
  readonly #starts = new Map<string, Array<{ at: number; start: string }>>();
  #taken = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  take(key: string, limit: RateLimit): Promise<RateVerdict> {
    return Promise.resolve(this.takeNow(key, limit));
  }

  /** `take`, answered at once. */
  takeNow(key: string, limit: RateLimit): RateVerdict {
    const now = this.#clock.now();
    const kept = (this.#starts.get(key) ?? []).filter(({ at }) => at > now - limit.per);
    if (kept.length >= limit.runs) {
      const oldest = (kept[0] as { at: number }).at;
      this.#starts.set(key, kept);
      return { allowed: false, retryAfterSeconds: retryAfterSeconds(oldest, limit, now) };
    }
    const start = `local:${++this.#taken}`;
    kept.push({ at: now, start });
    this.#starts.delete(key);
    if (this.#starts.size >= MAX_TRACKED) {
      const first = this.#starts.keys().next();
      if (first.done !== true) this.#starts.delete(first.value);
    }
    this.#starts.set(key, kept);
    return { allowed: true, start };
  }

  giveBack(key: string, start: string): Promise<void> {
    const kept = this.#starts.get(key);
    if (kept !== undefined) {
      this.#starts.set(
        key,
        kept.filter((taken) => taken.start !== start),
      );
    }
    return Promise.resolve();
  }
}
