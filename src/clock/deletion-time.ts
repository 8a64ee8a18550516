import type { Logger } from "../logging/logger.js";
import type { Clock } from "./clock.js";

/**
 * How far the wall clock may run ahead of the time that passed between two deletions before it
 * counts as set forward (NTP steps, a drifting VM clock are well within it; retention counts days).
 */
const CLOCK_STEP_TOLERANCE_MILLISECONDS = 60 * 60 * 1000;

/**
 * The time a repeated deletion by age (history past retention, the audit trail past its days) ages
 * things by. A deletion cannot be undone, so it never ages them by more time than passed: after the
 * first, each time is the last one's plus the time that passed since (the clock's `elapsed()`),
 * whenever the wall clock is further ahead than that. A clock set a year forward by mistake then
 * deletes nothing the policy keeps (a warning says so, once per step); set back, it deletes by the
 * earlier time.
 */
export class DeletionTime {
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** What is deleted, for the warning ("history", "the audit trail"). */
  readonly #what: string;
  /** The last time given and the clock's `elapsed()` then. */
  #last: { time: number; elapsed: number } | undefined;
  /** How far behind the wall clock the time given was when last said. */
  #aheadSaid = 0;

  constructor(clock: Clock, logger: Logger, what: string) {
    this.#clock = clock;
    this.#logger = logger;
    this.#what = what;
  }

  /** The wall clock's time, unless it ran ahead of the time that passed since the last call. */
  next(): Date {
    const wall = this.#clock.now();
    const elapsed = this.#clock.elapsed?.() ?? wall;
    const passed = this.#last === undefined ? wall : this.#last.time + (elapsed - this.#last.elapsed);
    const time = wall > passed + CLOCK_STEP_TOLERANCE_MILLISECONDS ? passed : wall;
    const ahead = wall - time;
    if (ahead > this.#aheadSaid + CLOCK_STEP_TOLERANCE_MILLISECONDS) {
      const days = Math.round(ahead / 86_400_000);
      const asOf = new Date(time).toISOString();
      this.#logger.warn(
        { clock: new Date(wall).toISOString(), pruned_as_of: asOf },
        `the clock was set forward by ${days} days (${Math.round(ahead / 60_000)} minutes) more than the time that passed: ${this.#what} is pruned as of ${asOf}, the time that passed since the last prune, until the daemon restarts; check the clock (NTP) if it is wrong`,
      );
    }
    this.#aheadSaid = ahead > 0 ? Math.max(this.#aheadSaid, ahead) : 0;
    this.#last = { time, elapsed };
    return new Date(time);
  }
}
