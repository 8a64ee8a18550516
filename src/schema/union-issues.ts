import type { z } from "zod";

/**
 * An issue as a user should read it: where (its full path) and what. zod reports a value that fits
 * none of a union's options as one `invalid_union` issue saying "Invalid input"; this says instead
 * what was allowed there (`must be "off" or a mapping`), or, when the value has the shape of one
 * option and something inside it is wrong, that inner problem at its own path
 * (`sandbox.mode: expected one of "workspace-write"|"read-only"|"off"`).
 */
export interface ReadableIssue {
  issue: z.core.$ZodIssue;
  path: PropertyKey[];
  message: string;
}

/** The issue itself, or the readable issues a union's "Invalid input" stands for. */
export function readableIssues(
  issue: z.core.$ZodIssue,
  prefix: readonly PropertyKey[] = [],
): ReadableIssue[] {
  const path = [...prefix, ...issue.path];
  if (issue.code !== "invalid_union" || issue.errors.length === 0)
    return [{ issue, path, message: issue.message }];
  // An option the value got into (its problems lie below the union's own place) tells more than the
  // options whose shape it does not have at all.
  const inner = issue.errors.find((optionIssues) => optionIssues.some((option) => !isShapeMismatch(option)));
  if (inner) return inner.flatMap((option) => readableIssues(option, path));
  const alternatives = [...new Set(issue.errors.flat().flatMap(describeAlternative))];
  if (alternatives.length === 0) return [{ issue, path, message: issue.message }];
  return [{ issue, path, message: `must be ${joinAlternatives(alternatives)}` }];
}

/** A problem at the union's own place that only says the value is not of this option's kind. */
function isShapeMismatch(issue: z.core.$ZodIssue): boolean {
  return issue.path.length === 0 && (issue.code === "invalid_type" || issue.code === "invalid_value");
}

function describeAlternative(issue: z.core.$ZodIssue): string[] {
  if (issue.code === "invalid_value") return issue.values.map((value) => JSON.stringify(value));
  if (issue.code === "invalid_type") return [TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`];
  return [];
}

const TYPE_NAMES: Record<string, string> = {
  object: "a mapping (key: value lines)",
  array: "a list",
  string: "a string",
  number: "a number",
  boolean: "true or false",
};

function joinAlternatives(alternatives: readonly string[]): string {
  if (alternatives.length === 1) return alternatives[0] ?? "";
  return `${alternatives.slice(0, -1).join(", ")} or ${alternatives.at(-1) ?? ""}`;
}
