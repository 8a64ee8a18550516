import { z } from "zod";

/** SPEC 4: the statuses of a run. */
export const RunStatusSchema = z.enum([
  "queued",
  "running",
  "paused",
  "waiting",
  "completed",
  "failed",
  "stopped",
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** SPEC 4: why a run ended other than `completed`. */
export const RunReasonSchema = z.enum([
  "timeout",
  "max_iterations",
  "budget_exceeded",
  "loop_detected",
  "llm_error",
  "cli_error",
  "tool_error",
  "user_stop",
  "daemon_shutdown",
  "crashed",
]);
export type RunReason = z.infer<typeof RunReasonSchema>;

export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "stopped"]);

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** Token usage, as the OpenAI API reports it. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export const EMPTY_USAGE: Usage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export function addUsage(left: Usage, right: Usage): Usage {
  return {
    prompt_tokens: left.prompt_tokens + right.prompt_tokens,
    completion_tokens: left.completion_tokens + right.completion_tokens,
    total_tokens: left.total_tokens + right.total_tokens,
  };
}
