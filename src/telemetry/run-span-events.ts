import type { Attributes, Span } from "@opentelemetry/api";
import type { EventDraft } from "../events/agent-event.js";

/** Where a run's event lands in its trace: its tool call's span if it names one, else the run's. */
export interface SpanTargets {
  runSpan: Span;
  toolSpan(callId: string | undefined): Span | undefined;
}

/**
 * A run's events as span events (the typed stream is the tap): approvals and questions (the
 * approval wait is the time between `requested` and the answer), hooks (a denial included),
 * fallbacks, compactions, warnings and errors. Names and ids only: no arguments, no output.
 * `action`, `observation`, `result` and `status` are spans and attributes, handled by the caller.
 */
export function addSpanEvent(draft: EventDraft, targets: SpanTargets, approvalWait?: number): void {
  const at = (callId: string | undefined) => targets.toolSpan(callId) ?? targets.runSpan;
  switch (draft.type) {
    case "approval": {
      const { data } = draft;
      at(data.call_id).addEvent(`agentd.approval.${data.state}`, {
        "agentd.approval.id": data.id,
        "gen_ai.tool.name": data.tool,
        ...optional("agentd.approval.scope", data.scope),
        ...optional("agentd.approval.by", data.by),
        ...optional("agentd.approval.wait_ms", approvalWait),
      });
      return;
    }
    case "question": {
      const { data } = draft;
      at(data.call_id).addEvent(`agentd.question.${data.state}`, {
        "agentd.question.id": data.id,
        ...optional("agentd.question.by", data.by),
      });
      return;
    }
    case "hook": {
      const { data } = draft;
      at(data.call_id).addEvent(`agentd.hook.${data.outcome}`, {
        "agentd.hook.point": data.hook,
        "agentd.hook.duration_ms": data.duration_ms,
        ...optional("agentd.hook.exit_code", data.exit_code),
      });
      return;
    }
    case "fallback":
      targets.runSpan.addEvent("agentd.fallback", {
        "agentd.fallback.from": draft.data.from,
        "agentd.fallback.to": draft.data.to,
        "error.type": draft.data.reason,
      });
      return;
    case "compaction":
      targets.runSpan.addEvent("agentd.compaction", {
        "agentd.compaction.method": draft.data.method,
        "agentd.compaction.tokens_before": draft.data.tokens_before,
        "agentd.compaction.tokens_after": draft.data.tokens_after,
      });
      return;
    case "warning":
      targets.runSpan.addEvent("agentd.warning", { "agentd.warning.code": draft.data.code });
      return;
    case "error":
      // A model call's retry is an event of its chat span (traced-model.ts); the rest land here.
      if (draft.data.retryable !== true)
        targets.runSpan.addEvent("agentd.error", { "error.type": draft.data.code });
      return;
    default:
      return;
  }
}

function optional(key: string, value: string | number | undefined): Attributes {
  return value === undefined ? {} : { [key]: value };
}
