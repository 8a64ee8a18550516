/** The first wait after a failed attempt; each later one doubles (SPEC 10). */
export const FIRST_RETRY_DELAY_MILLISECONDS = 1_000;
/** Attempts at most, the first included. */
export const MAX_DELIVERY_ATTEMPTS = 8;
/** A delivery not sent within this long of its creation is `failed`. */
export const MAX_DELIVERY_SPAN_MILLISECONDS = 3_600_000;

/** What the policy decides after a failed attempt: when to try again, or to give up. */
export type RetryDecision = { retry: true; at: number } | { retry: false; why: string };

/**
 * After failed attempt number `attempt` (from 1) of a delivery created at `createdAt`, at `now`: the
 * next attempt waits 1 s, 2 s, 4 s… — or what the receiver's `retry-after` asked, when it asked
 * for longer — unless that is past 8 attempts or an hour from the creation.
 */
export function nextAttempt(
  attempt: number,
  createdAt: number,
  now: number,
  retryAfterMilliseconds?: number,
): RetryDecision {
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return { retry: false, why: `gave up after ${attempt} attempts` };
  const backOff = FIRST_RETRY_DELAY_MILLISECONDS * 2 ** (attempt - 1);
  const at = now + Math.max(backOff, retryAfterMilliseconds ?? 0);
  if (at > createdAt + MAX_DELIVERY_SPAN_MILLISECONDS) {
    return { retry: false, why: "gave up: the next attempt would come more than an hour after the run" };
  }
  return { retry: true, at };
}

/**
 * A `retry-after` header in milliseconds from `now`: seconds, or an HTTP date. Undefined when absent
 * or unreadable.
 */
export function retryAfterMilliseconds(header: string | null | undefined, now: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1_000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
