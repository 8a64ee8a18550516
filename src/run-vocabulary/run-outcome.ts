import { toAgentdError } from "../errors/agentd-error.js";
import { runReasonOf } from "./abort-ending.js";
import type { ErrorCode } from "../errors/error-codes.js";
import { hintFor } from "../errors/error-hints.js";
import type { RunReason, RunStatus, Usage } from "./run-status.js";
import { EMPTY_USAGE } from "./run-status.js";
import type { RunRecord } from "./run-record.js";

/** How a run ended, as a worker reports it. */
export interface RunOutcome {
  status: Extract<RunStatus, "completed" | "failed" | "stopped">;
  reason?: RunReason;
  /** Final answer text when completed; what was produced so far otherwise. */
  result?: string;
  usage: Usage;
  cost_usd: number;
  /** Which worker produced the result: "llm", "cli:claude", ... */
  worker: string;
  /** `hint`: what the user should do next (the error's own, else its code's, src/errors/error-hints.ts). */
  error?: { code: ErrorCode; message: string; hint?: string };
}

const STOP_REASONS: ReadonlySet<RunReason> = new Set(["user_stop", "daemon_shutdown"]);

/** `stopped` for a stop asked by a user or the daemon, `failed` for everything else. */
export function statusForReason(reason: RunReason): "stopped" | "failed" {
  return STOP_REASONS.has(reason) ? "stopped" : "failed";
}

/** The reason a failure with this error code ends a run with. */
export function reasonForErrorCode(code: string): RunReason {
  if (code.startsWith("LLM_")) return "llm_error";
  if (code.startsWith("CLI_")) return "cli_error";
  // An MCP server that would not start is a tool that failed, not a daemon crash.
  if (code.startsWith("TOOL_") || code === "PATH_ESCAPE" || code === "MCP_UNAVAILABLE") return "tool_error";
  if (code === "BUDGET_EXCEEDED") return "budget_exceeded";
  if (code === "LOOP_DETECTED") return "loop_detected";
  if (code === "MAX_ITERATIONS") return "max_iterations";
  return "crashed";
}

/**
 * Makes a worker's outcome consistent with the run's signal: a run whose signal was aborted (stop,
 * shutdown, timeout) ends with that reason unless the worker completed anyway, and every run that
 * did not complete carries a reason.
 */
export function settleOutcome(outcome: RunOutcome, signal: AbortSignal): RunOutcome {
  if (outcome.status === "completed") return outcome;
  const aborted = runReasonOf(signal);
  if (aborted) return { ...outcome, status: statusForReason(aborted), reason: aborted };
  const reason = outcome.reason ?? reasonForErrorCode(outcome.error?.code ?? "INTERNAL");
  return { ...outcome, reason };
}

/** The outcome of a worker that threw instead of returning one. */
export function outcomeOfThrow(thrown: unknown, signal: AbortSignal, worker: string): RunOutcome {
  const error = toAgentdError(thrown);
  const failed: RunOutcome = {
    status: "failed",
    usage: EMPTY_USAGE,
    cost_usd: 0,
    worker,
    error: { code: error.code, message: error.message, hint: hintFor(error) },
  };
  return settleOutcome(failed, signal);
}

/** The fields of a run record an outcome sets. */
export function recordPatchOf(outcome: RunOutcome): Partial<RunRecord> {
  return {
    status: outcome.status,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    usage: outcome.usage,
    cost_usd: outcome.cost_usd,
    worker: outcome.worker,
    ...(outcome.result === undefined ? {} : { result: outcome.result }),
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
  };
}
