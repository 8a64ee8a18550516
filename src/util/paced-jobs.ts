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

  constructor(perTick: number | (() => number)) {
    this.#perTick = perTick;
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
