import { Cron } from "croner";
import type { Schedule } from "../definitions/agent-schema.js";

/** Fires that were due while nobody was watching: how many, and the most recent one. */
export interface MissedFires {
  latest: Date;
  /** Counted up to COUNT_LIMIT; a seconds-level cron down for a day would otherwise take long. */
  count: number;
}

const COUNT_LIMIT = 10_000;

/** The fires of `schedule` in (after, now], or undefined when there were none. */
export function missedFires(schedule: Schedule, after: Date, now: Date): MissedFires | undefined {
  const cron = new Cron(schedule.cron, { paused: true, ...timezoneOption(schedule) });
  let count = 0;
  for (const fire of cron.enumerate(after)) {
    if (fire.getTime() > now.getTime() || count >= COUNT_LIMIT) break;
    count += 1;
  }
  if (count === 0) return undefined;
  const [latest] = cron.previousRuns(1, now);
  return latest ? { latest, count } : undefined;
}

/** croner's timezone option for a schedule (none: the daemon's local time). */
export function timezoneOption(schedule: Schedule): { timezone?: string } {
  return schedule.timezone ? { timezone: schedule.timezone } : {};
}
