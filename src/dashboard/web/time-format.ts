// Times as a person reads them: relative ("3 min ago", "in 2 h") with the exact local time on hover.

const UNITS: ReadonlyArray<{ seconds: number; unit: Intl.RelativeTimeFormatUnit }> = [
  { seconds: 86_400, unit: "day" },
  { seconds: 3_600, unit: "hour" },
  { seconds: 60, unit: "minute" },
  { seconds: 1, unit: "second" },
];

const relativeFormat = new Intl.RelativeTimeFormat("en", { numeric: "auto", style: "short" });

/** "5 min. ago", "in 2 hr.", "now". */
export function relativeTime(time: Date, now: Date): string {
  const seconds = Math.round((time.getTime() - now.getTime()) / 1_000);
  if (Math.abs(seconds) < 5) return "now";
  for (const { seconds: size, unit } of UNITS) {
    if (Math.abs(seconds) >= size) return relativeFormat.format(Math.trunc(seconds / size), unit);
  }
  return "now";
}

/** The exact time in the browser's time zone, with the zone's name. */
export function exactTime(time: Date, timeZone?: string): string {
  return time.toLocaleString(undefined, {
    dateStyle: "medium",
    timeStyle: "long",
    ...(timeZone === undefined ? {} : { timeZone }),
  });
}

/** 850 ms, 12.3 s, 4 min 05 s, 2 h 03 min. */
export function formatDuration(milliseconds: number): string {
  if (!Number.isFinite(milliseconds) || milliseconds < 0) return "–";
  if (milliseconds < 1_000) return `${Math.round(milliseconds)} ms`;
  const seconds = milliseconds / 1_000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(Math.floor(seconds % 60)).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** $0.0123 below a cent's tenth, $1.23 above. */
export function formatCost(usd: number | undefined): string {
  if (usd === undefined || !Number.isFinite(usd)) return "–";
  if (usd === 0) return "$0";
  return usd < 0.1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** 1234567 → "1.2M", 12345 → "12.3k". */
export function formatCount(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(1)}M`;
  if (count >= 10_000) return `${(count / 1_000).toFixed(1)}k`;
  return String(count);
}
