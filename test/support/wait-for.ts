/**
 * How long a wait may take before the test fails: generous, since the suite runs on a busy machine
 * (CI reaches load 15–30 on 2 cores, where a daemon's start alone can take 10 s). A guard against
 * a hang, within vitest's 60 s per test; a wait that must end sooner says so.
 */
const DEFAULT_TIMEOUT_MILLISECONDS = 45_000;
/**
 * The pause between probes: short at first (most waits end within a few probes), growing by half
 * each time up to the longest, so a long wait (a lease to expire, a hundred runs to end on a
 * cluster) probes five times a second instead of forty. A probe is often a request to a daemon or a
 * query of PostgreSQL: polled every 25 ms throughout, the probes of the long waits cost more CPU
 * than what they waited for, and slowed it down on a loaded machine.
 */
const FIRST_POLL_MILLISECONDS = 25;
const LAST_POLL_MILLISECONDS = 200;

/**
 * Polls `probe` until it returns something other than `undefined` or `false`, and returns that;
 * fails naming `what` at the deadline. For the places where nothing announces readiness (another
 * process's state, a file, a long poll parked on the server): anything that emits an event or
 * resolves a promise is awaited directly instead.
 */
export async function waitFor<Value>(
  probe: () => Value | undefined | false | Promise<Value | undefined | false>,
  what: string,
  timeoutMilliseconds = DEFAULT_TIMEOUT_MILLISECONDS,
): Promise<Value> {
  const deadline = Date.now() + timeoutMilliseconds;
  let pause = FIRST_POLL_MILLISECONDS;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(LAST_POLL_MILLISECONDS, pause * 1.5);
  }
}
