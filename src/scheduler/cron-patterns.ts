import type { Cron } from "croner";
import { cronClass } from "./croner.js";
import type { Schedule } from "../definitions/agent-schema.js";

/** Parsed patterns kept for reuse: a croner pattern holds ~80 KB (a 10,000-slot year table). */
const CACHE_LIMIT = 16;
const cache = new Map<string, Cron>();

/** croner's timezone option for a schedule (none: the daemon's local time). */
export function timezoneOption(schedule: Schedule): { timezone?: string } {
  return schedule.timezone ? { timezone: schedule.timezone } : {};
}

/** What identifies a schedule's fire times: its cron and timezone. */
export function patternKey(schedule: Schedule): string {
  return JSON.stringify([schedule.cron, schedule.timezone ?? null]);
}

/**
 * A paused croner for the schedule's pattern, shared by every schedule with the same cron and
 * timezone and dropped least-recently-used past a small limit. Nothing fires on it: the scheduler
 * only asks it for fire times, so no agent holds a croner job while it is idle.
 */
export function cronFor(schedule: Schedule): Cron {
  const key = patternKey(schedule);
  let cron = cache.get(key);
  if (cron) {
    cache.delete(key);
  } else {
    const Cron = cronClass();
    cron = new Cron(schedule.cron, { paused: true, ...timezoneOption(schedule) });
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
  }
  cache.set(key, cron);
  return cron;
}

/** The first fire strictly after `after`, or undefined when the pattern never fires again. */
export function nextFireAfter(schedule: Schedule, after: number): number | undefined {
  return cronFor(schedule).nextRun(new Date(after))?.getTime();
}
