/**
 * Calls `onIdle` once when no progress arrived for `idleMilliseconds`. Paused time does not count:
 * `pause()` stops the clock and `resume()` starts a full new period. While `isWorking()` says the
 * CLI runs a tool call of its own, silence is that call working: the period starts again instead.
 */
export class IdleWatchdog {
  readonly #idleMilliseconds: number;
  readonly #onIdle: () => void;
  readonly #isWorking: () => boolean;
  #timer: NodeJS.Timeout | undefined;
  #fired = false;

  constructor(idleMilliseconds: number, onIdle: () => void, isWorking: () => boolean = () => false) {
    this.#idleMilliseconds = idleMilliseconds;
    this.#onIdle = onIdle;
    this.#isWorking = isWorking;
    this.#arm();
  }

  get fired(): boolean {
    return this.#fired;
  }

  /** Progress arrived: the idle period starts again. */
  touch(): void {
    this.#timer?.refresh();
  }

  pause(): void {
    this.#clear();
  }

  resume(): void {
    if (!this.#fired && this.#timer === undefined) this.#arm();
  }

  stop(): void {
    this.#clear();
  }

  #arm(): void {
    if (!Number.isFinite(this.#idleMilliseconds) || this.#idleMilliseconds <= 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#isWorking()) {
        this.#arm();
        return;
      }
      this.#fired = true;
      this.#onIdle();
    }, this.#idleMilliseconds);
  }

  #clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
