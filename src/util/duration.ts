import { z } from "zod";

const UNIT_MILLISECONDS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** One or more `<amount><unit>` parts, largest first or not: `30s`, `1m30s`, `1h 15m`, `1.5h`. */
const DURATION_PATTERN = /^(?:\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h|d))+\s*$/;
const DURATION_PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/g;

/**
 * Parses `30s`, `5m`, `1h`, `250ms`, `2d`, combinations such as `1m30s` (what formatDuration
 * writes), or a number of milliseconds. Returns undefined when invalid.
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  if (!DURATION_PATTERN.test(value)) return undefined;
  let milliseconds = 0;
  for (const [, amount, unit] of value.matchAll(DURATION_PART)) {
    milliseconds += Number(amount) * UNIT_MILLISECONDS[unit as keyof typeof UNIT_MILLISECONDS];
  }
  return Math.round(milliseconds);
}

/** A duration field: `30s` / `5m` / `1h` / milliseconds, parsed to milliseconds. */
export const DurationSchema = z.union([z.number(), z.string()]).transform((value, context) => {
  const milliseconds = parseDuration(value);
  if (milliseconds === undefined) {
    context.addIssue({
      code: "custom",
      message: `"${value}" is not a duration: write a number of milliseconds or 30s, 5m, 1h`,
    });
    return z.NEVER;
  }
  return milliseconds;
});

/** Formats milliseconds the way a user wrote them: 90000 → "1m30s". */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1_000) return `${milliseconds}ms`;
  const seconds = Math.round(milliseconds / 1_000);
  const hours = Math.floor(seconds / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  const rest = seconds % 60;
  return [hours && `${hours}h`, minutes && `${minutes}m`, rest && `${rest}s`].filter(Boolean).join("");
}
