import type { Clock } from "../../src/clock/clock.js";
import { ManualClock } from "./manual-clock.js";

/**
 * The system clock's two faces: timers and `elapsed()` count time passing (the monotonic clock),
 * `now()` is the wall clock, which an operator or NTP may set forward while a timer waits.
 */
export class SettableWallClock implements Clock {
  readonly elapsedClock: ManualClock;
  #setForwardBy = 0;

  constructor(start: Date | number) {
    this.elapsedClock = new ManualClock(start);
  }

  now(): number {
    return this.elapsedClock.now() + this.#setForwardBy;
  }

  setTimer(callback: () => void, delayMilliseconds: number): () => void {
    return this.elapsedClock.setTimer(callback, delayMilliseconds);
  }

  elapsed(): number {
    return this.elapsedClock.now();
  }

  /** Sets the wall clock forward (backward when negative); no timer runs and no time passes. */
  setForward(milliseconds: number): void {
    this.#setForwardBy += milliseconds;
  }
}
