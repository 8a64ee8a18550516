import type { Clock } from "./clock.js";

export interface RepeatingTaskOptions<Result> {
  /** The work; it handles its own errors (a rejection would end the repetition). */
  run: () => Promise<Result>;
  /** The time and the timer; tests move it by hand. */
  clock: Clock;
  intervalMilliseconds: number;
}

/**
 * Work done at start and then every interval on the one clock, one run at a time: a run asked for
 * while one is under way joins it, and the interval counts from the end of the last run, so a slow
 * run never stacks up behind itself. History pruning and audit pruning share it.
 */
export class RepeatingTask<Result> {
  readonly #options: RepeatingTaskOptions<Result>;
  #cancel: (() => void) | undefined;
  #running: Promise<Result> | undefined;
  #stopped = false;

  constructor(options: RepeatingTaskOptions<Result>) {
    this.#options = options;
  }

  /** Runs now, then every interval. */
  start(): void {
    this.#stopped = false;
    void this.runNow();
  }

  /** One run now (or the one under way); resolves with its result. */
  runNow(): Promise<Result> {
    this.#cancel?.();
    this.#running ??= this.#options.run().finally(() => {
      this.#running = undefined;
      this.#schedule();
    });
    return this.#running;
  }

  /** Stops the timer; a run under way finishes. Resolves once it has. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#cancel = this.#options.clock.setTimer(() => void this.runNow(), this.#options.intervalMilliseconds);
  }
}
