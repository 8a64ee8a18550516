import { AgentdError, toAgentdError } from "../errors/agentd-error.js";
import { hintFor } from "../errors/error-hints.js";
import { spaceFailureOf } from "../util/storage-gate.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Options every command inherits from the root: `--config` and `--json`. */
export interface GlobalOptions {
  config?: string;
  json?: boolean;
}

/** One JSON object per line on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Prints an error the same way everywhere: `error CODE: file:line field: message — hint`. */
export function reportFatal(error: unknown, json: boolean): void {
  const agentdError = toAgentdError(storageFullOf(error) ?? error);
  if (json) printJson({ error: errorForUser(agentdError) });
  else process.stderr.write(`error ${agentdError.code}: ${describeForUser(agentdError)}\n`);
}

/** `file:line field: message — hint`, with the hint of the error's code when it carries none. */
export function describeForUser(error: AgentdError): string {
  return error.hint === undefined ? `${error.describe()} — ${hintFor(error)}` : error.describe();
}

/** The error as JSON, with the hint of its code when it carries none. */
export function errorForUser(error: AgentdError): Record<string, unknown> {
  return { ...error.toJSON(), hint: hintFor(error) };
}

/**
 * A file system error saying there is no room (ENOSPC, EDQUOT, EROFS) that reached the top (the
 * start met a full data_dir before it could serve), said as STORAGE_FULL rather than INTERNAL.
 */
function storageFullOf(error: unknown): AgentdError | undefined {
  if (error instanceof AgentdError) return undefined;
  const failure = spaceFailureOf(error);
  if (!failure) return undefined;
  const where = failure.file === undefined ? "" : ` writing ${failure.file}`;
  return new AgentdError("STORAGE_FULL", `the disk has no room (${failure.code}${where})`, {
    // The same for `agentd start` and any command that writes data_dir (`agentd secrets set`).
    hint: "free space in data_dir (or make it writable) and run the command again",
    details: { error: failure.code },
    cause: error,
  });
}
