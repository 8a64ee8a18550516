/** How long work gets to end by itself once its run is stopped, before the run goes on without it. */
export const ABANDON_AFTER_MILLISECONDS = 5_000;

/**
 * Waits for a tool call; once `signal` aborts, waits at most `graceMilliseconds` more, then rejects
 * with the signal's reason. A tool that ignores its signal (a write blocked on a FIFO, a library
 * call with no cancel) then cannot hold a stopped run open; what it still does is left behind.
 */
export function settleOrAbandon<Result>(
  work: Promise<Result>,
  signal: AbortSignal,
  graceMilliseconds = ABANDON_AFTER_MILLISECONDS,
): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => reject(signal.reason), graceMilliseconds);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const settled = () => {
      signal.removeEventListener("abort", onAbort);
      clearTimeout(timer);
    };
    work.then(
      (result) => {
        settled();
        resolve(result);
      },
      (error: unknown) => {
        settled();
        reject(error);
      },
    );
  });
}
