import type { ErrorCode } from "../../errors/error-codes.js";
import { hintFor } from "../../errors/error-hints.js";
import type { EventDataByType, EventDraft } from "../../events/agent-event.js";
import type { RunReason } from "../../run-vocabulary/run-status.js";
import { EMPTY_USAGE, addUsage } from "../../run-vocabulary/run-status.js";
import type { RunContext } from "../worker.js";
import type { RunOutcome } from "../../run-vocabulary/run-outcome.js";
import type { CliTranscript } from "./cli-transcript.js";

/** Publishes one event of this run. */
export function publishRunEvent<Type extends "result" | "error" | "fallback">(
  context: RunContext,
  type: Type,
  data: EventDataByType[Type],
): void {
  context.events.publish({ agent: context.definition.id, run: context.runId, type, data } as EventDraft);
}

/** The tool did the work: its answer, usage and cost. */
export function completedOutcome(transcript: CliTranscript, worker: string): RunOutcome {
  return {
    status: "completed",
    result: transcript.answer,
    usage: transcript.usage,
    cost_usd: transcript.costUsd,
    worker,
  };
}

/** The run ended other than completed; what the tool produced so far is kept as the result. */
export function endedOutcome(
  status: "failed" | "stopped",
  reason: RunReason,
  transcript: CliTranscript | undefined,
  worker: string,
  error?: { code: ErrorCode; message: string; hint?: string },
): RunOutcome {
  const answer = transcript?.answer;
  return {
    status,
    reason,
    ...(answer ? { result: answer } : {}),
    usage: transcript?.usage ?? EMPTY_USAGE,
    cost_usd: transcript?.costUsd ?? 0,
    worker,
    ...(error ? { error: { code: error.code, message: error.message, hint: hintFor(error) } } : {}),
  };
}

/** The LLM worker's outcome after a fallback, counting what the CLI had already spent. */
export function fallbackOutcome(
  outcome: RunOutcome,
  transcript: CliTranscript | undefined,
  worker: string,
): RunOutcome {
  return {
    ...outcome,
    worker,
    usage: transcript ? addUsage(transcript.usage, outcome.usage) : outcome.usage,
    cost_usd: (transcript?.costUsd ?? 0) + outcome.cost_usd,
  };
}
