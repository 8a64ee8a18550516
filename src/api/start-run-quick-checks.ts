import type { QuickCheck } from "./quick-request-check.js";

/** A valid `Idempotency-Key`: printable ASCII, not blank (the zod schema's own pattern). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]*[\x21-\x7e][\x20-\x7e]*$/;

/**
 * The keys triggers make their runs with (`webhook:<name>:<delivery>`, `after:<name>:<run>`,
 * `watch:<name>:<digest>`, src/triggers/), in the same per-agent index as the API's: a caller who
 * wrote one would take the trigger's place, its delivery then answered as a duplicate.
 */
export const TRIGGER_KEY_PREFIX = /^(?:webhook|after|watch):/;

/**
 * The quick check of `POST /agents/:id/runs`'s body (`{ task? }`, no other key): a task that is a
 * string not blank once trimmed is read as zod reads it; anything else is left to zod, which
 * words the error. A burst of run requests no longer runs zod on each body.
 */
export const quickStartRunBody: QuickCheck = (data) => {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  for (const key in data) if (key !== "task") return undefined;
  if (!("task" in data)) return {};
  const { task } = data as { task: unknown };
  if (typeof task !== "string") return undefined;
  const trimmed = task.trim();
  return trimmed.length > 0 ? { task: trimmed } : undefined;
};

/**
 * The quick check of `POST /agents/:id/runs`'s headers: every header passes as it came, so when the
 * `Idempotency-Key` is absent or valid and `traceparent` absent or a string (and no header is
 * undefined), the headers are the value zod would make, without copying them.
 */
export function quickStartRunHeaders(maxKeyLength: number): QuickCheck {
  return (data) => {
    if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
    const headers = data as Record<string, unknown>;
    for (const key in headers) if (headers[key] === undefined) return undefined;
    const key = headers["idempotency-key"];
    if (
      "idempotency-key" in headers &&
      (typeof key !== "string" ||
        key.length > maxKeyLength ||
        !IDEMPOTENCY_KEY_PATTERN.test(key) ||
        TRIGGER_KEY_PREFIX.test(key))
    )
      return undefined;
    if ("traceparent" in headers && typeof headers.traceparent !== "string") return undefined;
    return headers;
  };
}
