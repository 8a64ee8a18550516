import type { Logger } from "../logging/logger.js";
import type { Clock } from "../clock/clock.js";
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
 */
export class RetentionPruner {
  readonly #options: RetentionPrunerOptions;
  #cancel: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RetentionPrunerOptions) {
    this.#options = options;
  }

  /** Prunes now, then every interval. */
  start(): void {
    this.#stopped = false;
    void this.pruneNow();
  }

  /** One prune now (or the one under way); resolves once it is done. */
  pruneNow(): Promise<void> {
    this.#cancel?.();
    this.#running ??= this.#prune().finally(() => {
      this.#running = undefined;
      this.#schedule();
    });
    return this.#running;
  }

  /** Stops the timer; a prune under way finishes. Resolves once it has. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
    await this.#running;
  }

  async #prune(): Promise<void> {
    const { logger, clock } = this.#options;
    try {
      const report = await this.#options.prune(this.#options.policyOf, new Date(clock.now()));
      if (report.runs > 0 || report.segments > 0) logger.info(report, "pruned history past retention");
    } catch (error) {
      logger.warn({ err: error }, "could not prune history past retention; trying again later");
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    const interval = this.#options.intervalMilliseconds ?? DEFAULT_PRUNE_INTERVAL_MILLISECONDS;
    this.#cancel = this.#options.clock.setTimer(() => void this.pruneNow(), interval);
  }
}
