import type { Schedule } from "../definitions/agent-schema.js";
import { cronFor } from "./cron-patterns.js";

/** A seconds-level cron down for a day would otherwise take long to list. */
const COUNT_LIMIT = 10_000;

/**
 * The times of the fires of `schedule` in (after, until], oldest first, as ISO strings: each is
 * claimed on its own, then run or reported under `on_missed`. At most COUNT_LIMIT of them, the
 * latest ones (a report's `count` is then a lower bound).
 */
export function missedFireTimes(schedule: Schedule, after: Date, until: Date): string[] {
  const cron = cronFor(schedule);
  const times: string[] = [];
  let fire = cron.nextRun(after);
  while (fire && fire.getTime() <= until.getTime()) {
    times.push(fire.toISOString());
    if (times.length > COUNT_LIMIT) times.shift();
    fire = cron.nextRun(fire);
  }
  return times;
}
