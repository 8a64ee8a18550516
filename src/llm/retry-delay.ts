/** Longest wait agentd accepts from a server's `retry-after` when no max_delay is configured. */
const DEFAULT_RETRY_AFTER_CAP_MILLISECONDS = 60_000;

/**
 * Milliseconds a `retry-after` (seconds or an HTTP date) or `retry-after-ms` header asks for, or
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = headers?.get("retry-after-ms");
  if (milliseconds && Number.isFinite(Number(milliseconds))) return Math.max(0, Number(milliseconds));
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface BackoffSettings {
  baseDelayMilliseconds: number;
  maxDelayMilliseconds: number;
}

/**
 * How long to wait before retry number `attempt` (1 = the first retry): exponential from the base
 * delay with "equal jitter" (half fixed, half random), capped at the max delay. A server's
 * `retry-after` wins when given, capped at the same max so a bogus header cannot stall a run.
 */
export function retryDelay(
  attempt: number,
  settings: BackoffSettings,
  retryAfterMilliseconds?: number,
  random: () => number = Math.random,
): number {
  const cap = settings.maxDelayMilliseconds || DEFAULT_RETRY_AFTER_CAP_MILLISECONDS;
  if (retryAfterMilliseconds !== undefined) return Math.min(retryAfterMilliseconds, cap);
  const exponential = Math.min(cap, settings.baseDelayMilliseconds * 2 ** (attempt - 1));
  return exponential / 2 + random() * (exponential / 2);
}
