import type { ErrorCode } from "../errors/error-codes.js";

/** Codes only `warning` events carry: things worth knowing that did not fail the run. */
export const WARNING_ONLY_CODES = [
  "LENGTH_LIMIT",
  "HISTORY_REPAIRED",
  "CLI_OUTPUT_IGNORED",
  "CLI_TOOL_DENIED",
  "CLI_TOOL_WARNING",
  "UNSANDBOXED",
] as const;

/** The code of a `warning` event: one of its own, or an error code for a failure the run survived. */
export type WarningCode = (typeof WARNING_ONLY_CODES)[number] | ErrorCode;
