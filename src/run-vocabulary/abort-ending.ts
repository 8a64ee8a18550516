import { AgentdError, toAgentdError } from "../errors/agentd-error.js";
import { RunAbort } from "./run-control.js";
import type { RunReason } from "./run-status.js";
import { timeoutSignal } from "../util/timeout-signal.js";

/**
 * What aborting a signal of a run's tree means for the work under it:
 * - `run`: the run itself ends — stop, shutdown, its working-time timeout, a budget — with its reason;
 * - `deadline`: the call's or the child's own deadline passed (a `TimeoutError`, see timeoutSignal);
 * - `cancelled`: agentd ended the work for a reason of its own (a hung CLI), named by the error.
 */
export type AbortEnding =
  | { kind: "run"; reason: RunReason; message: string }
  | { kind: "deadline" }
  | { kind: "cancelled"; error: AgentdError };

/**
 * The one reading of an abort reason: `signal.reason`, or execa's `cause` of a cancelled child
 * (execa rejects with the cancel signal's reason). Every place that asks "why did this end?" —
 * the run's outcome, a shell call's result, a CLI child's exit — asks here.
 */
export function abortEndingOf(reason: unknown): AbortEnding {
  if (reason instanceof RunAbort) return { kind: "run", reason: reason.reason, message: reason.message };
  if (reason instanceof DOMException && reason.name === "TimeoutError") return { kind: "deadline" };
  if (reason instanceof AgentdError) return { kind: "cancelled", error: reason };
  return { kind: "cancelled", error: toAgentdError(reason, "RUN_ABORTED") };
}

/** How `signal` ended, or undefined while it has not. */
export function endingOf(signal: AbortSignal): AbortEnding | undefined {
  return signal.aborted ? abortEndingOf(signal.reason) : undefined;
}

/** The reason the run itself ended with (`kind: "run"`), or undefined when `signal` ended otherwise or not at all. */
export function runReasonOf(signal: AbortSignal): RunReason | undefined {
  const ending = endingOf(signal);
  return ending?.kind === "run" ? ending.reason : undefined;
}

/**
 * One child's or one call's signal: the run's (stop, shutdown, the run's working-time timeout) and
 * its own deadline, merged once. Without a finite deadline it is the run's signal itself; without
 * a run (a hook of `agentd run` before the run exists) it is the deadline alone.
 */
export function withDeadline(signal: AbortSignal | undefined, milliseconds: number | undefined): AbortSignal {
  const finite = milliseconds !== undefined && Number.isFinite(milliseconds);
  if (!finite) return signal ?? new AbortController().signal;
  const deadline = timeoutSignal(milliseconds);
  return signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
}
