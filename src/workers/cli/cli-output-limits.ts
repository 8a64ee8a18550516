/**
 * The most of one stdout line of a CLI tool agentd keeps (4 Mi characters): enough for any line of
 * the built-in tools' JSON streams (a tool result, a final answer), while a CLI that prints 100 MB
 * on one line costs the daemon a few megabytes, not gigabytes.
 */
export const MAX_CLI_LINE_CHARACTERS = 4 * 1024 * 1024;

/**
 * The most of a CLI's text agentd keeps in one `thought` and in the run's result (1 Mi characters);
 * the rest is dropped as it arrives, and a note where it was cut says how much.
 */
export const MAX_CLI_TEXT_CHARACTERS = 1024 * 1024;

/**
 * The most of a CLI's work (its last messages, then its last tool calls) agentd hands the LLM
 * fallback in its note (6,000 characters): the end of the work matters most, and a CLI that said
 * a thousand long messages must not make a prompt of them.
 */
export const MAX_FALLBACK_NOTE_CHARACTERS = 6_000;

/** The note that stands where a CLI's text or line was cut: what was left out, and why. */
export function cliCutNote(droppedCharacters: number, limit: number, what: string): string {
  return (
    `\n[agentd cut ${droppedCharacters.toLocaleString("en-US")} more characters here: ` +
    `${what} is kept up to ${limit.toLocaleString("en-US")} characters (docs/cli-workers.md)]`
  );
}
