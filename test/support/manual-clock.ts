import type { Clock } from "../../src/clock/clock.js";

/**
 * A clock moved by hand: `advanceTo` runs the timers due on the way, each at its own
 * time, so a test sees what a daemon would at those moments without waiting for them.
 */
export class ManualClock implements Clock {
  #now: number;
  #timers: Array<{ at: number; callback: () => void; sequence: number }> = [];
  #sequence = 0;

  constructor(start: Date | number) {
    this.#now = typeof start === "number" ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMilliseconds: number): () => void {
    const timer = { at: this.#now + Math.max(0, delayMilliseconds), callback, sequence: this.#sequence++ };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((other) => other !== timer);
    };
  }

  /** Timers waiting. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time to `time`, running every timer due up to then in order, at its own time. */
  advanceTo(time: Date | number): void {
    const target = typeof time === "number" ? time : time.getTime();
    for (;;) {
      const [next] = [...this.#timers].sort(
        (left, right) => left.at - right.at || left.sequence - right.sequence,
      );
      if (!next || next.at > target) break;
      this.#timers = this.#timers.filter((other) => other !== next);
      this.#now = Math.max(this.#now, next.at);
      next.callback();
    }
    this.#now = Math.max(this.#now, target);
  }

  advanceBy(milliseconds: number): void {
    this.advanceTo(this.#now + milliseconds);
  }
}
