import type { Clock } from "../../clock/clock.js";
import type { LiveRun } from "../live-runs.js";

/**
 * How long a running run's record may lag behind what it spent. A round of a quick model and tool
 * takes a few milliseconds: writing the record after every model call replaced the whole file as
 * often, the largest disk cost a round had, for readers who poll far less often than that.
 */
export const SPENDING_WRITE_INTERVAL_MILLISECONDS = 1_000;

export interface SpendingWritesOptions {
  clock: Clock;
  /** Whether the run is still held here and unfinished (its end writes the record itself). */
  holds: (run: LiveRun) => boolean;
  /** Writes the run's record as it is now. */
  save: (run: LiveRun) => void;
}

/**
 * The run record's spending while a run runs (see docs/runs.md, "Spending while a run runs"). Each
 * model call's usage is added to the record in memory at once, so every status change (and the
 * end) writes it; between status changes the record is written at most once per
 * SPENDING_WRITE_INTERVAL_MILLISECONDS, the last spending always within that. What a crash can
 * lose of it is in the run's checkpoint, appended before the round's tools run: recovery takes
 * the larger of the two (spendingAfterCrash).
 */
export class SpendingWrites {
  readonly #options: SpendingWritesOptions;
  /** Runs with a write due, each with the function that cancels its timer. */
  readonly #due = new Map<LiveRun, () => void>();

  constructor(options: SpendingWritesOptions) {
    this.#options = options;
  }

  /** The run's record changed its spending: written within the interval, unless it ends first. */
  changed(run: LiveRun): void {
    if (this.#due.has(run)) return;
    const cancel = this.#options.clock.setTimer(() => {
      this.#due.delete(run);
      if (this.#options.holds(run)) this.#options.save(run);
    }, SPENDING_WRITE_INTERVAL_MILLISECONDS);
    this.#due.set(run, cancel);
  }

  /** The run ended or was let go: no write is due for it any more. */
  forget(run: LiveRun): void {
    this.#due.get(run)?.();
    this.#due.delete(run);
  }
}
