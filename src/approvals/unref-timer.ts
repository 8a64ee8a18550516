/** Node's timers fire at once past this delay (a 32-bit signed integer of milliseconds). */
const LONGEST_TIMER = 2_147_483_647;

/**
 * Calls `onFire` after `milliseconds` (never synchronously), without keeping the process alive,
 * also for delays longer than a Node timer allows (an approval timeout of `30d`). Returns the
 * function that cancels it.
 */
export function unrefTimer(milliseconds: number, onFire: () => void): () => void {
  const deadline = Date.now() + milliseconds;
  let timer: NodeJS.Timeout;
  const schedule = (delay: number) => {
    timer = setTimeout(
      () => {
        const remaining = deadline - Date.now();
        if (remaining > 0) schedule(remaining);
        else onFire();
      },
      Math.min(Math.max(delay, 0), LONGEST_TIMER),
    );
    timer.unref();
  };
  schedule(milliseconds);
  return () => clearTimeout(timer);
}
