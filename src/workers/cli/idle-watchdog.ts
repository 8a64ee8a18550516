/**
 * Calls `onIdle` once when no output arrived for `idleMilliseconds`. Paused time does not count:
 * `pause()` stops the clock and `resume()` starts a full new period.
 */
export class IdleWatchdog {
  readonly #idleMilliseconds: number;
  readonly #onIdle: () => void;
  #timer: NodeJS.Timeout | undefined;
  #fired = false;

  constructor(idleMilliseconds: number, onIdle: () => void) {
    this.#idleMilliseconds = idleMilliseconds;
    this.#onIdle = onIdle;
    this.#arm();
  }

  get fired(): boolean {
    return this.#fired;
  }

  /** Output arrived: the idle period starts again. */
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
      this.#fired = true;
      this.#onIdle();
    }, this.#idleMilliseconds);
  }

  #clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
