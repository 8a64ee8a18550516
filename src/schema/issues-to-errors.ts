import type { z } from "zod";
import type { AgentdError } from "../errors/agentd-error.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { describeIssues, problemToError } from "./schema-issues.js";
import type { LocatedYaml } from "./yaml-document.js";

/** What to check a user's YAML (frontmatter or preset) against, and how to word the hints. */
export interface IssueSource {
  code: ErrorCode;
  schema: z.ZodType;
  file: string;
  lineOf: LocatedYaml["lineOf"];
  /** The hint for a wrong value at `field` (`schedule.timezone`) under `topLevelKey` (`schedule`). */
  hintFor: (field: string, topLevelKey: string) => string;
}

/** Turns zod issues into located errors: file, line, field, message and what to do. */
export function issuesToErrors(source: IssueSource, issues: readonly z.core.$ZodIssue[]): AgentdError[] {
  const located: LocatedYaml = { value: undefined, syntaxError: undefined, lineOf: source.lineOf };
  return describeIssues(source.schema, issues, located).map((problem) => {
    const topLevelKey = /^[^.[]*/.exec(problem.field)?.[0] ?? "";
    const hint = problem.unknownKey
      ? "remove the key or fix its spelling"
      : source.hintFor(problem.field, topLevelKey);
    return problemToError(source.code, source.file, problem, hint);
  });
}
