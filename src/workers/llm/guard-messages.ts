/** What the loop tells the model when a guardrail steps in. Plain sentences the model can act on. */

export const CONTINUE_AFTER_LENGTH =
  "Your last answer was cut off by the output length limit. Continue exactly where it stopped, without repeating anything.";

export function loopWarning(description: string): string {
  return `Warning: ${description}. This is not making progress: change your approach, or give your final answer. Repeating it further ends the run.`;
}

export function toolDisabledNotice(tool: string, failures: number): string {
  return `The tool ${tool} failed ${failures} times in a row and has been removed for the rest of this run. Work without it.`;
}

export function disabledToolResult(tool: string): string {
  return `Error (TOOL_NOT_FOUND): ${tool} is disabled for the rest of this run after repeated failures.`;
}

/** The text of a tool message: the output, or the error with its code so the model can correct it. */
export function toolResultText(result: { ok: boolean; output: string; code?: string }): string {
  return result.ok ? result.output : `Error (${result.code ?? "TOOL_FAILED"}): ${result.output}`;
}

export const SUMMARY_INSTRUCTIONS =
  "You compact the history of an AI agent's run. Summarize the transcript you are given: what was done, which tools were called with what results, facts learned, files touched, decisions made, and what remains to do. Be concise and factual; keep names, paths, numbers and identifiers exact. Answer with the summary only.";
