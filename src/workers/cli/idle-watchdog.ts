import { type Clock, systemClock } from "../../clock/clock.js";

/**
 * Calls `onIdle` once when no progress arrived for `idleMilliseconds`. Paused time does not count:
 * `pause()` stops the clock and `resume()` starts a full new period. While `isWorking()` says the
 * CLI runs a tool call of its own, silence is that call working: the period starts again instead.
 * Time is the run's clock: progress only notes the time, and the one timer, when it fires early,
 * is armed again for what is left.
 */
export class IdleWatchdog {
  readonly #idleMilliseconds: number;
  readonly #onIdle: () => void;
  readonly #isWorking: () => boolean;
  readonly #clock: Clock;
  #cancelTimer: (() => void) | undefined;
  /** When the current idle period started: the last progress, resume, or re-arm. */
  #periodStart = 0;
  #fired = false;

  constructor(
    idleMilliseconds: number,
    onIdle: () => void,
    isWorking: () => boolean = () => false,
    clock: Clock = systemClock,
  ) {
    this.#idleMilliseconds = idleMilliseconds;
    this.#onIdle = onIdle;
    this.#isWorking = isWorking;
    this.#clock = clock;
    this.#arm();
  }

  get fired(): boolean {
    return this.#fired;
  }

  /** Progress arrived: the idle period starts again. */
  touch(): void {
    if (this.#cancelTimer !== undefined) this.#periodStart = this.#clock.now();
  }

  pause(): void {
    this.#clear();
  }

  resume(): void {
    if (!this.#fired && this.#cancelTimer === undefined) this.#arm();
  }

  stop(): void {
    this.#clear();
  }

  #arm(): void {
    if (!Number.isFinite(this.#idleMilliseconds) || this.#idleMilliseconds <= 0) return;
    this.#periodStart = this.#clock.now();
    this.#armFor(this.#idleMilliseconds);
  }

  #armFor(delayMilliseconds: number): void {
    this.#cancelTimer = this.#clock.setTimer(() => this.#check(), delayMilliseconds);
  }

  #check(): void {
    const left = this.#periodStart + this.#idleMilliseconds - this.#clock.now();
    if (left > 0) {
      this.#armFor(left);
      return;
    }
    this.#cancelTimer = undefined;
    if (this.#isWorking()) {
      this.#arm();
      return;
    }
    this.#fired = true;
    this.#onIdle();
  }

  #clear(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }
}
