/**
 * Quick checks of the hot routes' params and query strings (polls, streams): a hand-written reading
 * of the common, valid request that gives exactly the value its zod schema would, without running
 * zod; anything else (a value of the wrong form, out of bounds, repeated) is left to the zod schema,
 * which words the error. `test/api/quick-request-check.test.ts` checks both agree on every input.
 */

/** A whole number, 0 or more, as the query string carries it (what the zod schemas match too). */
export const WHOLE_NUMBER_PATTERN = /^\d{1,15}$/;
/** A number of seconds, 0 or more, with an optional fraction. */
export const SECONDS_PATTERN = /^\d{1,9}(\.\d+)?$/;

/** One field of a params or query-string object, as its zod schema reads it. */
export type QuickField =
  /** A string (at least minLength long, matching pattern when given); absent: no value. */
  | { kind: "string"; minLength?: number; pattern?: RegExp; optional?: boolean }
  /** WHOLE_NUMBER_PATTERN read as a number within [minimum, maximum]; absent: `fallback` or none. */
  | { kind: "whole"; fallback?: number; minimum?: number; maximum?: number }
  /** SECONDS_PATTERN read as a number cut to `cap`; absent: `fallback`. */
  | { kind: "seconds"; fallback: number; cap: number };

/** The parsed value of a valid request part, or undefined: the zod schema decides. */
export type QuickCheck = (data: unknown) => Record<string, unknown> | undefined;

/** Reads one field; undefined when zod must decide, `ABSENT` when the output has no such key. */
const ABSENT = Symbol("absent");

function readField(field: QuickField, value: unknown, present: boolean): unknown {
  if (value === undefined) {
    // A key given as undefined is not what a URL parser makes: zod decides.
    if (present) return undefined;
    if (field.kind === "string") return field.optional === true ? ABSENT : undefined;
    return field.fallback ?? ABSENT;
  }
  if (typeof value !== "string") return undefined;
  switch (field.kind) {
    case "string":
      if (value.length < (field.minLength ?? 0)) return undefined;
      return field.pattern === undefined || field.pattern.test(value) ? value : undefined;
    case "whole": {
      if (!WHOLE_NUMBER_PATTERN.test(value)) return undefined;
      const number = Number(value);
      if (field.minimum !== undefined && number < field.minimum) return undefined;
      if (field.maximum !== undefined && number > field.maximum) return undefined;
      return number;
    }
    case "seconds":
      return SECONDS_PATTERN.test(value) ? Math.min(Number(value), field.cap) : undefined;
  }
}

/**
 * The quick check of an object whose fields are `fields` (other keys are dropped, as z.object
 * drops them).
 */
export function quickObjectCheck(fields: Readonly<Record<string, QuickField>>): QuickCheck {
  const entries = Object.entries(fields);
  return (data) => {
    if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
    const input = data as Record<string, unknown>;
    const output: Record<string, unknown> = {};
    for (const [key, field] of entries) {
      const value = readField(field, input[key], key in input);
      if (value === undefined) return undefined;
      if (value !== ABSENT) output[key] = value;
    }
    return output;
  };
}
