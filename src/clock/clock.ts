/**
 * The daemon's one time source: what time it is, and one timer. The composition root makes one and
 * hands it to every part whose behaviour depends on time passing (the scheduler, run timeouts,
 * approval and question timeouts, long polls, sessions, cluster leases); tests pass a clock they move
 * by hand, so no test waits for a real window to pass. Parts that only stamp a record read the same
 * clock when they hold one.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `callback` once after `delayMilliseconds` (never synchronously, and never keeping the
   * process alive); returns the function that cancels it.
   */
  setTimer(callback: () => void, delayMilliseconds: number): () => void;
  /**
   * Milliseconds on a clock nobody sets (it only counts time passing, as the timers do), from any
   * origin; absent, `now()` stands in. Tells a wall clock set forward from time that passed.
   */
  elapsed?(): number;
}

/** setTimeout keeps a delay in a signed 32-bit int: longer waits are re-armed in steps. */
export const MAX_TIMER_DELAY_MILLISECONDS = 2_147_483_647;

/**
 * Wall-clock time and Node's timers, unref'd (the API server keeps the daemon alive). A delay past
 * what a Node timer holds (an approval timeout of `30d`) is re-armed until it is due. A delay is a
 * duration, counted on the monotonic clock: a wall clock stepped back (NTP, an operator) must not
 * hold a lease renewal, a run's timeout or a long poll for as long as the step. A part that waits
 * for a wall-clock time (the fire timer) checks the time when it wakes and arms again.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimer(callback, delayMilliseconds) {
    const deadline = performance.now() + Math.max(0, delayMilliseconds);
    let timer: NodeJS.Timeout;
    const arm = (delay: number) => {
      timer = setTimeout(
        () => {
          const remaining = deadline - performance.now();
          if (remaining > 0) arm(remaining);
          else callback();
        },
        Math.min(Math.max(0, delay), MAX_TIMER_DELAY_MILLISECONDS),
      );
      timer.unref();
    };
    arm(delayMilliseconds);
    return () => clearTimeout(timer);
  },
};

/** The clock's time as a Date: for the parts that stamp records with `now: () => Date`. */
export function dateSource(clock: Clock): () => Date {
  return () => new Date(clock.now());
}
