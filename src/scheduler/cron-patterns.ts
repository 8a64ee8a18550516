import type { Cron } from "croner";
import { cronClass } from "./croner.js";

/**
 * Built patterns kept for reuse: the one a file's check builds is the one the scheduler asks for
 * fire times, so 1,000 agents with their own cron build 1,000 patterns once, not twice. Bounded,
 * since the expressions come from users' files; ~2.5 KB each (see `compact`).
 */
const CACHE_LIMIT = 4_096;
const cache = new Map<string, Cron>();

/** What of a schedule its fire times depend on (no timezone: the daemon's local time). */
export interface CronSchedule {
  cron: string;
  timezone?: string | undefined;
}

/** What identifies a schedule's fire times: its cron and timezone. */
export function patternKey(schedule: CronSchedule): string {
  return `${schedule.cron}\u0000${schedule.timezone ?? ""}`;
}

/**
 * A paused croner for the schedule's pattern, shared by every schedule with the same cron and
 * timezone and dropped least-recently-used past the limit. Nothing fires on it: the scheduler only
 * asks it for fire times, so no agent holds a croner job while it is idle. Throws croner's error
 * for an invalid expression or timezone (nothing is kept then).
 */
export function cronFor(schedule: CronSchedule): Cron {
  const key = patternKey(schedule);
  let cron = cache.get(key);
  if (cron) {
    cache.delete(key);
  } else {
    const Cron = cronClass();
    cron = compact(
      new Cron(schedule.cron, {
        paused: true,
        ...(schedule.timezone ? { timezone: schedule.timezone } : {}),
      }),
    );
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
  }
  cache.set(key, cron);
  return cron;
}

/** The first fire strictly after `after`, or undefined when the pattern never fires again. */
export function nextFireAfter(schedule: CronSchedule, after: number): number | undefined {
  return cronFor(schedule).nextRun(new Date(after))?.getTime();
}

/** The part of croner's parsed pattern `compact` looks at. */
interface YearTable {
  starYear?: unknown;
  year?: unknown;
}

let everyYear: number[] | undefined;

/**
 * croner gives each pattern a 10,000-slot table of the years it fires in (~80 KB), which it reads
 * only for a pattern with a year field: for ours (5 or 6 fields, every year) all tables are alike,
 * so they share one. A croner whose inside looks different is kept as it is.
 */
function compact(cron: Cron): Cron {
  const pattern = (cron as unknown as { _states?: { pattern?: YearTable } })._states?.pattern;
  if (pattern?.starYear !== true || !Array.isArray(pattern.year)) return cron;
  everyYear ??= pattern.year as number[];
  pattern.year = everyYear;
  return cron;
}
