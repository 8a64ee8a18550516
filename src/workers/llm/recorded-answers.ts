import type { AgentEvent } from "../../events/agent-event.js";

/** What a human decided for one tool call before the run was cut off, as its events recorded it. */
export type RecordedAnswer =
  | { kind: "question"; answer: string; by: string | undefined }
  | { kind: "approval"; state: "approved" | "denied" | "expired"; by: string | undefined };

/**
 * The answers and decisions a run's log holds, by the tool call they answered (`call_id`): the last
 * one of each call. A `denied` by `stop` is the run's own end, not a human's word: left out.
 */
export function recordedAnswers(events: readonly AgentEvent[]): Map<string, RecordedAnswer> {
  const answers = new Map<string, RecordedAnswer>();
  for (const event of events) {
    if (event.type === "question") {
      const { data } = event;
      if (data.call_id !== undefined && data.state === "answered" && data.answer !== undefined)
        answers.set(data.call_id, { kind: "question", answer: data.answer, by: data.by });
    } else if (event.type === "approval") {
      const { data } = event;
      if (data.call_id === undefined || data.state === "requested" || data.by === "stop") continue;
      answers.set(data.call_id, { kind: "approval", state: data.state, by: data.by });
    }
  }
  return answers;
}

/**
 * The observation of a call cut off by a crash or a shutdown, given what was answered for it: a
 * question's answer is its result (asking has no side effect); a denial means it never ran; an
 * approval is told, the call not being run again (it may or may not have taken effect).
 */
export function interruptedCallOutput(
  tool: string,
  answer: RecordedAnswer | undefined,
): { ok: boolean; output: string } {
  if (answer?.kind === "question") return { ok: true, output: answer.answer };
  if (answer?.kind === "approval" && answer.state !== "approved")
    return {
      ok: false,
      output: `TOOL_DENIED: ${tool} call not approved (${answer.state === "expired" ? "the approval request expired" : "a human denied it"}) before the daemon stopped; it did not run; do not retry it`,
    };
  const approved = answer?.kind === "approval" ? " A human had approved it before the daemon stopped." : "";
  return {
    ok: false,
    output: `TOOL_INTERRUPTED: ${tool} was interrupted: the daemon stopped while it ran, so it may or may not have taken effect.${approved} It was not run again; check its effect before calling it again.`,
  };
}
