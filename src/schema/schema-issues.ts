import type { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { didYouMean, knownKeysAt } from "./known-keys.js";
import { readableIssues } from "./union-issues.js";
import type { LocatedYaml } from "./yaml-document.js";

/** One problem found in a user's file, before it becomes an error or a warning. */
export interface SchemaProblem {
  field: string;
  line: number | undefined;
  message: string;
  unknownKey: boolean;
}

/** `limits.max_tokens`, `tools[2]`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((segment, index) =>
      typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`,
    )
    .join("");
}

/** Turns zod issues into problems that name the field, the line and, for an unknown key, the likely one. */
export function describeIssues(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  yaml?: LocatedYaml,
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const known = knownKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        const suggestion = didYouMean(key, known);
        problems.push({
          field: formatPath(path),
          line: yaml?.lineOf(path),
          message: `unknown key "${key}"${suggestion ? ` — did you mean "${suggestion}"?` : ""}`,
          unknownKey: true,
        });
      }
      continue;
    }
    for (const readable of readableIssues(issue)) {
      problems.push({
        field: formatPath(readable.path),
        line: yaml?.lineOf(readable.path),
        message: readable.message,
        unknownKey: false,
      });
    }
  }
  return problems;
}

export function problemToError(
  code: ErrorCode,
  file: string,
  problem: SchemaProblem,
  hint?: string,
): AgentdError {
  return new AgentdError(code, problem.message, {
    file,
    ...(problem.line === undefined ? {} : { line: problem.line }),
    ...(problem.field === "" ? {} : { field: problem.field }),
    ...(hint === undefined ? {} : { hint }),
  });
}
