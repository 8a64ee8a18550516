/**
 * How long a wait may take before the test fails: generous, since the suite runs on a busy machine
 * (CI reaches load 15–30 on 2 cores, where a daemon's start alone can take 10 s). A guard against
 * a hang, within vitest's 60 s per test; a wait that must end sooner says so.
 */
const DEFAULT_TIMEOUT_MILLISECONDS = 45_000;
const POLL_MILLISECONDS = 25;

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
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MILLISECONDS));
  }
}
