import { toAgentdError } from "../errors/agentd-error.js";

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
  const agentdError = toAgentdError(error);
  if (json) printJson({ error: agentdError.toJSON() });
  else process.stderr.write(`error ${agentdError.code}: ${agentdError.describe()}\n`);
}
