/**
 * The time source of the scheduler: what time it is, and one timer. Tests pass a clock they move
 * by hand, so no test waits for a real cron to fire.
 */
export interface SchedulerClock {
  now(): number;
  /** Calls `callback` once after `delayMilliseconds`; returns the function that cancels it. */
  setTimer(callback: () => void, delayMilliseconds: number): () => void;
}

/** setTimeout keeps a delay in a signed 32-bit int: longer waits are re-armed in steps. */
export const MAX_TIMER_DELAY_MILLISECONDS = 2_147_483_647;

/** Wall-clock time and Node's timers (unref'd: the API server keeps the daemon alive). */
export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  setTimer(callback, delayMilliseconds) {
    const timer = setTimeout(
      callback,
      Math.min(Math.max(0, delayMilliseconds), MAX_TIMER_DELAY_MILLISECONDS),
    );
    timer.unref();
    return () => clearTimeout(timer);
  },
};
