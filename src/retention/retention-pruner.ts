import type { Logger } from "../logging/logger.js";
import type { Clock } from "../clock/clock.js";
import { RepeatingTask } from "../clock/repeating-task.js";
import type { RetentionPolicy } from "../config/retention-policy.js";

/** What one prune deleted. */
export interface PruneReport {
  /** Runs deleted (record, run log, checkpoint, index line). */
  runs: number;
  /** Agent-log segments deleted. */
  segments: number;
}

/**
 * How far the wall clock may run ahead of the time that passed between two prunes before it counts
 * as set forward (NTP steps, a drifting VM clock are well within it; retention counts days).
 */
const CLOCK_STEP_TOLERANCE_MILLISECONDS = 60 * 60 * 1000;

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
 * A deletion cannot be undone, so a prune never ages runs by more time than passed: after the first,
 * each prune's time is the last one's plus the time that passed since (the clock's `elapsed()`),
 * whenever the wall clock is further ahead than that. A clock set a year forward by mistake then
 * prunes nothing the policy keeps (a warning says so); set back, it prunes by the earlier time.
 */
export class RetentionPruner {
  readonly #options: RetentionPrunerOptions;
  readonly #task: RepeatingTask<void>;
  /** The last prune's time and the clock's `elapsed()` then. */
  #last: { time: number; elapsed: number } | undefined;
  /** How far behind the wall clock the prunes' time was when last said. */
  #aheadSaid = 0;

  constructor(options: RetentionPrunerOptions) {
    this.#options = options;
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
      const report = await this.#options.prune(this.#options.policyOf, this.#timeOfPrune());
      if (report.runs > 0 || report.segments > 0) logger.info(report, "pruned history past retention");
    } catch (error) {
      logger.warn({ err: error }, "could not prune history past retention; trying again later");
    }
  }

  /** The wall clock's time, unless it ran ahead of the time that passed since the last prune. */
  #timeOfPrune(): Date {
    const { clock, logger } = this.#options;
    const wall = clock.now();
    const elapsed = clock.elapsed?.() ?? wall;
    const passed = this.#last === undefined ? wall : this.#last.time + (elapsed - this.#last.elapsed);
    const time = wall > passed + CLOCK_STEP_TOLERANCE_MILLISECONDS ? passed : wall;
    const ahead = wall - time;
    if (ahead > this.#aheadSaid + CLOCK_STEP_TOLERANCE_MILLISECONDS) {
      const days = Math.round(ahead / 86_400_000);
      logger.warn(
        { clock: new Date(wall).toISOString(), pruned_as_of: new Date(time).toISOString() },
        `the clock was set forward by ${days} days (${Math.round(ahead / 60_000)} minutes) more than the time that passed: history is pruned as of ${new Date(time).toISOString()}, the time that passed since the last prune, until the daemon restarts; check the clock (NTP) if it is wrong`,
      );
    }
    this.#aheadSaid = ahead > 0 ? Math.max(this.#aheadSaid, ahead) : 0;
    this.#last = { time, elapsed };
    return new Date(time);
  }
}
