/**
 * Jobs run a few per tick of the event loop, in the order given: work that piles up while the loop
 * was busy (200 writes landing in the same tick, each starting a run) is spread over the ticks
 * after, with requests and timers answered between them.
 */
export class PacedJobs {
  /** Jobs per tick, or what says it at each tick. */
  readonly #perTick: number | (() => number);
  readonly #jobs: Array<() => void> = [];
  #scheduled = false;
  /** Jobs run at once (runSoon) in this turn of the event loop. */
  #ranNow = 0;

  constructor(perTick: number | (() => number)) {
    this.#perTick = perTick;
  }

  /**
   * Runs `job` now when no job waits and fewer than a tick's count ran now in this turn of the event
   * loop, else as `add`. A job must not throw.
   */
  runSoon(job: () => void): void {
    const count = typeof this.#perTick === "number" ? this.#perTick : this.#perTick();
    if (this.#jobs.length > 0 || this.#ranNow >= count) {
      this.add(job);
      return;
    }
    if (this.#ranNow === 0)
      setImmediate(() => {
        this.#ranNow = 0;
      });
    this.#ranNow += 1;
    job();
  }

  /**
   * A new turn begins for runSoon's count (the caller knows one began: the setImmediate that resets
   * it may come after other callbacks of the next turn).
   */
  newTurn(): void {
    this.#ranNow = 0;
  }

  /** Runs `job` in a later tick, after the jobs given before it. A job must not throw. */
  add(job: () => void): void {
    this.#jobs.push(job);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#jobs.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const count = typeof this.#perTick === "number" ? this.#perTick : this.#perTick();
      for (const job of this.#jobs.splice(0, count)) job();
      this.#schedule();
    });
  }
}
