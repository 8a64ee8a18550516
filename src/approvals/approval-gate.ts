import type { ApprovalPolicy } from "../config/config-schema.js";
import type { EventPublisher } from "../events/event-bus.js";

/** One `ask` call waiting for a human. */
export interface ApprovalRequest {
  agent: string;
  run: string;
  tool: string;
  /** The arguments as the model wrote them: secret templates in place, never values. */
  arguments: unknown;
  /** Why the permission check asked, shown to the human. */
  reason: string;
  /** The agent's `approvals` (timeout, on_timeout). */
  policy: ApprovalPolicy;
  /** The run's signal: a stop while waiting ends the wait by throwing its reason. */
  signal: AbortSignal;
  events: EventPublisher;
  /** The tool call waiting, named in the events. */
  callId?: string | undefined;
}

/** How a request ended. `scope: "run"` approves this tool for the rest of the run. */
export interface ApprovalAnswer {
  approved: boolean;
  state: "approved" | "denied" | "expired";
  scope: "once" | "run";
}

/**
 * Parks an `ask` call until it is answered (API, `agentd approve|deny`, a TTY prompt) or expires
 * with the policy's `on_timeout`. Emits the `approval` events. Rejects with the run's abort reason
 * when the run is stopped while waiting.
 */
export interface ApprovalGate {
  request(request: ApprovalRequest): Promise<ApprovalAnswer>;
}
