import type { Clock } from "../clock/clock.js";
import { RepeatingTask } from "../clock/repeating-task.js";
import { DeletionTime } from "../clock/deletion-time.js";
import type { Logger } from "../logging/logger.js";
import type { AuditLog } from "./audit-log.js";

const DAY_MILLISECONDS = 86_400_000;

/** How often the audit trail is pruned while the daemon runs (and once at start), as run history is. */
export const AUDIT_PRUNE_INTERVAL_MILLISECONDS = 60 * 60 * 1000;

export interface AuditRetentionOptions {
  log: Pick<AuditLog, "prune">;
  /** Config `retention.audit_days` (which follows `retention.days` when left out); null keeps all. */
  days: number | null;
  /** The time and the timer; tests move it by hand. */
  clock: Clock;
  logger: Logger;
  intervalMilliseconds?: number;
}

/**
 * Deletes the audit entries older than `retention.audit_days` at start and then every hour, one
 * prune at a time. On a cluster each node prunes the shared table: a delete of what is gone is a
 * no-op. A failed prune is logged and tried again at the next interval. A prune never ages entries
 * by more time than passed (DeletionTime): a clock set forward by mistake deletes no day kept.
 */
export class AuditRetention {
  readonly #options: AuditRetentionOptions;
  readonly #task: RepeatingTask<number>;
  /** The time each prune ages entries by: the time that passed, not a clock set forward. */
  readonly #time: DeletionTime;

  constructor(options: AuditRetentionOptions) {
    this.#options = options;
    this.#time = new DeletionTime(options.clock, options.logger, "the audit trail");
    this.#task = new RepeatingTask({
      run: () => this.#prune(),
      clock: options.clock,
      intervalMilliseconds: options.intervalMilliseconds ?? AUDIT_PRUNE_INTERVAL_MILLISECONDS,
    });
  }

  /** Prunes now, then every interval (nothing with `days: null`). */
  start(): void {
    if (this.#options.days !== null) this.#task.start();
  }

  /** One prune now (or the one under way); resolves with the entries it deleted. */
  pruneNow(): Promise<number> {
    return this.#task.runNow();
  }

  /** Stops the timer; a prune under way finishes. Resolves once it has. */
  stop(): Promise<void> {
    return this.#task.stop();
  }

  async #prune(): Promise<number> {
    const { days, logger, log } = this.#options;
    if (days === null) return 0;
    try {
      const deleted = await log.prune(new Date(this.#time.next().getTime() - days * DAY_MILLISECONDS));
      if (deleted > 0) logger.info({ deleted, days }, "pruned the audit trail past retention");
      return deleted;
    } catch (error) {
      logger.warn({ err: error }, "could not prune the audit trail; trying again later");
      return 0;
    }
  }
}
