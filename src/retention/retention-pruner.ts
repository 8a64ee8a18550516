import type { Logger } from "../logging/logger.js";
import type { Clock } from "../clock/clock.js";
import { RepeatingTask } from "../clock/repeating-task.js";
import { DeletionTime } from "../clock/deletion-time.js";
import type { RetentionPolicy } from "../config/retention-policy.js";

/** What one prune deleted. */
export interface PruneReport {
  /** Runs deleted (record, run log, checkpoint, index line). */
  runs: number;
  /** Agent-log segments deleted. */
  segments: number;
}

/** How often history is pruned while the daemon runs (and once at start). */
export const DEFAULT_PRUNE_INTERVAL_MILLISECONDS = 60 * 60 * 1000;

export interface RetentionPrunerOptions {
  /** The store's prune (DurableStore.prune). */
  prune: (policyOf: (agent: string) => RetentionPolicy, now: Date) => Promise<PruneReport>;
  /** The policy of an agent: its definition's, else config's (an agent whose file is gone). */
  policyOf: (agent: string) => RetentionPolicy;
  /** The time and the timer; tests move it by hand. */
  clock: Clock;
  logger: Logger;
  intervalMilliseconds?: number;
}

/**
 * Prunes run history past retention at start and then every interval (SPEC 10), one prune at a
 * time. A failed prune is logged and tried again at the next interval.
 *
 * A prune never ages runs by more time than passed (DeletionTime): a clock set a year forward by
 * mistake prunes nothing the policy keeps.
 */
export class RetentionPruner {
  readonly #options: RetentionPrunerOptions;
  readonly #task: RepeatingTask<void>;
  /** The time each prune ages runs by: the time that passed, not a clock set forward. */
  readonly #time: DeletionTime;

  constructor(options: RetentionPrunerOptions) {
    this.#options = options;
    this.#time = new DeletionTime(options.clock, options.logger, "history");
    this.#task = new RepeatingTask({
      run: () => this.#prune(),
      clock: options.clock,
      intervalMilliseconds: options.intervalMilliseconds ?? DEFAULT_PRUNE_INTERVAL_MILLISECONDS,
    });
  }

  /** Prunes now, then every interval. */
  start(): void {
    this.#task.start();
  }

  /** One prune now (or the one under way); resolves once it is done. */
  pruneNow(): Promise<void> {
    return this.#task.runNow();
  }

  /** Stops the timer; a prune under way finishes. Resolves once it has. */
  stop(): Promise<void> {
    return this.#task.stop();
  }

  async #prune(): Promise<void> {
    const { logger } = this.#options;
    try {
      const report = await this.#options.prune(this.#options.policyOf, this.#time.next());
      if (report.runs > 0 || report.segments > 0) logger.info(report, "pruned history past retention");
    } catch (error) {
      logger.warn({ err: error }, "could not prune history past retention; trying again later");
    }
  }
}
