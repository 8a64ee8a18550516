import type { Clock } from "./clock.js";

/** Samples kept: the one with the shortest round trip among them sets the offset. */
const SAMPLES_KEPT = 8;

/** One reading of the reference clock, between two readings of the base clock. */
interface OffsetSample {
  offset: number;
  roundTrip: number;
}

/**
 * A clock set to a reference clock's time (on a cluster, PostgreSQL's `clock_timestamp()`): the
 * base clock's time plus the offset measured against the reference, and the base clock's timers
 * (delays are durations, the same on both). Each measure reads the reference between two readings
 * of the base clock and takes it to be read half-way through; of the last SAMPLES_KEPT measures,
 * the one with the shortest round trip counts (the latest of equals) (a slow answer says the least about when the
 * reference was read). The time it gives never goes backwards: a correction backwards holds it
 * still until it is caught up, except the first measure, made once at start before anything is
 * scheduled.
 */
export class OffsetClock implements Clock {
  /** The clock this one corrects: its timers, and the readings that surround each measure. */
  readonly base: Clock;
  readonly #samples: OffsetSample[] = [];
  #offset = 0;
  /** The latest time given: `now()` never goes below it. */
  #latest = Number.NEGATIVE_INFINITY;
  #measured = false;

  constructor(base: Clock) {
    this.base = base;
  }

  /** Milliseconds to add to the base clock's time to get the reference's (0 before the first measure). */
  get offset(): number {
    return this.#offset;
  }

  now(): number {
    const time = this.base.now() + this.#offset;
    if (time > this.#latest) this.#latest = time;
    return this.#latest;
  }

  setTimer(callback: () => void, delayMilliseconds: number): () => void {
    return this.base.setTimer(callback, delayMilliseconds);
  }

  /** The base clock's: an offset corrects the time of day, not how much time passed. */
  elapsed(): number {
    return this.base.elapsed?.() ?? this.base.now();
  }

  /**
   * A measure: the reference read `reference` (milliseconds since the epoch) after the base clock
   * read `sentAt` and before it read `answeredAt`.
   */
  measured(sentAt: number, answeredAt: number, reference: number): void {
    const roundTrip = answeredAt - sentAt;
    if (!(roundTrip >= 0) || !Number.isFinite(reference)) return;
    this.#samples.push({ offset: reference - (sentAt + roundTrip / 2), roundTrip });
    if (this.#samples.length > SAMPLES_KEPT) this.#samples.shift();
    const best = this.#samples.reduce((left, right) => (right.roundTrip <= left.roundTrip ? right : left));
    this.#offset = Math.round(best.offset);
    if (!this.#measured) {
      this.#measured = true;
      this.#latest = Number.NEGATIVE_INFINITY;
    }
  }
}
