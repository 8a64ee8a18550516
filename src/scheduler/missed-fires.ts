import type { Schedule } from "../definitions/agent-schema.js";
import { cronFor } from "./cron-patterns.js";

/** Fires that were due while nobody was watching: how many, and the most recent one. */
export interface MissedFires {
  latest: Date;
  /** How many fires were missed; counted up to COUNT_LIMIT (then `capped`). */
  count: number;
  /** True when there were more than COUNT_LIMIT: `count` is a lower bound. */
  capped: boolean;
}

/** A seconds-level cron down for a day would otherwise take long to count. */
const COUNT_LIMIT = 10_000;

/** The fires of `schedule` in (after, until], or undefined when there were none. */
export function missedFires(schedule: Schedule, after: Date, until: Date): MissedFires | undefined {
  const cron = cronFor(schedule);
  let count = 0;
  let latest: Date | undefined;
  let fire = cron.nextRun(after);
  while (fire && fire.getTime() <= until.getTime()) {
    count += 1;
    latest = fire;
    if (count >= COUNT_LIMIT) {
      // The latest fire is found from the end; the count stays a lower bound.
      latest = cron.previousRuns(1, new Date(until.getTime() + 1))[0] ?? latest;
      return { latest, count, capped: true };
    }
    fire = cron.nextRun(fire);
  }
  return latest ? { latest, count, capped: false } : undefined;
}
