import { toAgentdError } from "../../errors/agentd-error.js";
import { hintFor } from "../../errors/error-hints.js";
import { runReasonOf } from "../../run-vocabulary/abort-ending.js";
import { reasonForErrorCode, statusForReason } from "../../run-vocabulary/run-outcome.js";
import type { RunContext } from "../worker.js";
import type { RunOutcome } from "../../run-vocabulary/run-outcome.js";
import type { RunBudget } from "./run-budget.js";

/**
 * How a run that did not complete ends: the run's abort reason when its signal was aborted
 * (stop, timeout, shutdown), else the reason of the error's code. The last model text is kept;
 * a failed run carries its error, a stopped one only its reason.
 */
export function failureOutcome(
  error: unknown,
  context: RunContext,
  budget: RunBudget,
  lastText: string,
): RunOutcome {
  const { signal } = context.control;
  const aborted = signal.aborted ? (runReasonOf(signal) ?? "daemon_shutdown") : undefined;
  const failure = toAgentdError(aborted ? signal.reason : error);
  const reason = aborted ?? reasonForErrorCode(failure.code);
  const status = statusForReason(reason);
  return {
    status,
    reason,
    ...(lastText ? { result: lastText } : {}),
    usage: budget.usage,
    cost_usd: budget.costUsd,
    worker: "llm",
    // A stop asked for by a user or the daemon is not an error; its reason says it all.
    ...(status === "failed"
      ? { error: { code: failure.code, message: failure.message, hint: hintFor(failure) } }
      : {}),
  };
}
