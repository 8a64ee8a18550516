/** Reset times further away than this are not believed (a parse gone wrong). */
const MAX_AHEAD_MILLISECONDS = 8 * 24 * 3_600_000;

const UNIT_MILLISECONDS: Array<[RegExp, number]> = [
  [/^(ms|milliseconds?)$/i, 1],
  [/^(d|days?)$/i, 86_400_000],
  [/^(h|hrs?|hours?)$/i, 3_600_000],
  [/^(m|mins?|minutes?)$/i, 60_000],
  [/^(s|secs?|seconds?)$/i, 1_000],
];
const DURATION_PART =
  /(\d+(?:\.\d+)?)\s*(milliseconds?|ms|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])/gi;

/**
 * When a quota or rate limit ends, read from a CLI's error text: `resets_at` / `|<epoch>`
 * (seconds), `resets_in_seconds`, `retry-after: N`, "try again in 2 days 3 hours", "resets in
 * 2h39m52s", "Please retry in 47.4s", "try again at Apr 28th, 2026 10:03 PM", an ISO time after
 * "reset"/"retry"/"until", or a clock time such as "resets 3pm" (the daemon's local time). Returns
 * undefined when the text gives no believable time.
 */
export function extractRetryTime(text: string, now: Date): Date | undefined {
  const candidates = [
    epochSeconds(text),
    secondsFrom(now, /resets?_in_seconds"?\s*[:=]\s*(\d+(?:\.\d+)?)/i.exec(text)?.[1]),
    secondsFrom(now, /retry[-_ ]after"?\s*[:=]?\s*"?(\d+(?:\.\d+)?)/i.exec(text)?.[1]),
    relativeDuration(text, now),
    calendarTime(text),
    isoTime(text),
    clockTime(text, now),
  ];
  return candidates.find(
    (candidate): candidate is Date =>
      candidate !== undefined &&
      candidate.getTime() > now.getTime() &&
      candidate.getTime() - now.getTime() <= MAX_AHEAD_MILLISECONDS,
  );
}

function epochSeconds(text: string): Date | undefined {
  const match = /resets?_at"?\s*[:=]\s*"?(\d{10})\b/i.exec(text) ?? /\|(\d{10})\b/.exec(text);
  return match?.[1] ? new Date(Number(match[1]) * 1_000) : undefined;
}

function secondsFrom(now: Date, seconds: string | undefined): Date | undefined {
  return seconds === undefined ? undefined : new Date(now.getTime() + Number(seconds) * 1_000);
}

function relativeDuration(text: string, now: Date): Date | undefined {
  const phrase =
    /(?:retry|try again|resets?|available)\s+in\s+((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)/i.exec(
      text,
    )?.[1];
  if (!phrase) return undefined;
  let total = 0;
  for (const [, amount, unit] of phrase.matchAll(DURATION_PART)) {
    const multiplier = UNIT_MILLISECONDS.find(([pattern]) => pattern.test(unit ?? ""))?.[1] ?? 0;
    total += Number(amount) * multiplier;
  }
  return total > 0 ? new Date(now.getTime() + Math.round(total)) : undefined;
}

function calendarTime(text: string): Date | undefined {
  const match =
    /(?:try again|retry|resets?|available)\s+(?:at|on|after)?\s*([A-Z][a-z]{2,8}\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4},? \d{1,2}:\d{2}(?::\d{2})?\s*(?:AM|PM)?)/i.exec(
      text,
    );
  if (!match?.[1]) return undefined;
  const parsed = Date.parse(match[1].replace(/(\d)(st|nd|rd|th)/i, "$1").replace(/,/g, ""));
  return Number.isNaN(parsed) ? undefined : new Date(parsed);
}

function isoTime(text: string): Date | undefined {
  const match =
    /(?:reset|retry|until|again)[^\n]{0,24}?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))/i.exec(
      text,
    );
  if (!match?.[1]) return undefined;
  const parsed = Date.parse(match[1]);
  return Number.isNaN(parsed) ? undefined : new Date(parsed);
}

function clockTime(text: string, now: Date): Date | undefined {
  const match =
    /(?:resets?|try again at|retry at|available at)\s*(?:at\s*)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b/i.exec(
      text,
    );
  if (!match?.[1] || !match[3]) return undefined;
  const hour = (Number(match[1]) % 12) + (match[3].toLowerCase() === "pm" ? 12 : 0);
  const next = new Date(now);
  next.setHours(hour, Number(match[2] ?? 0), 0, 0);
  if (next.getTime() <= now.getTime()) next.setDate(next.getDate() + 1);
  return next;
}
