import { type Clock, systemClock } from "../clock/clock.js";
import { randomBytes } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventDataByType } from "../events/agent-event.js";
import type { Actor } from "../events/actor.js";
import type { ApprovalAnswer, ApprovalGate, ApprovalRequest } from "./approval-gate.js";
import { PendingAnswers } from "./pending-answers.js";

/** Options of `decide`. */
export interface DecideOptions {
  /** "run" approves this tool for the rest of the run. Default "once". */
  scope?: "once" | "run";
  /** Who answered, the event's `by`: "api" (default), "tty". The broker itself uses "timeout", "stop". */
  by?: string;
  /** Who decided (a token, the dashboard, the CLI): recorded in the event. */
  actor?: Actor;
}

/** A tool call waiting for a user's answer (snake_case on the wire). */
export interface PendingApproval {
  id: string;
  agent: string;
  run: string;
  tool: string;
  /** Arguments with secrets masked. */
  arguments?: unknown;
  requested_at?: string;
  expires_at?: string;
  /** Why the permission check asked (the matching `ask` rule, or "not listed"). */
  reason?: string;
  /** What happens at `expires_at` if no one answers. */
  on_timeout?: "deny" | "approve";
}

/** A pending approval as the broker hands it to a listener (a TTY prompt): with the reason. */
export interface RequestedApproval extends PendingApproval {
  arguments: unknown;
  requested_at: string;
  expires_at: string;
  /** Why the permission check asked. */
  reason: string;
  /** What happens at `expires_at` if no one answers. */
  on_timeout: "deny" | "approve";
}

export interface ApprovalBrokerOptions {
  /** Stamps the requests and runs their timeouts (default: the system clock). */
  clock?: Clock;
  /** Default: `a_` and 10 random hex digits. */
  createId?: () => string;
  /** Masks secret values in the arguments `list()` returns (the events are masked by the bus). */
  redact?: <Value>(value: Value) => Value;
}

interface Pending {
  approval: RequestedApproval;
  request: ApprovalRequest;
}

/**
 * Parks `ask` calls until a human answers them (the HTTP API, `agentd approve|deny`, the TTY
 * prompt of `agentd run`) or they expire. Each request publishes `approval` events on its run:
 * "requested", then one of
 * - "approved" / "denied" with `scope` and `by` when decided;
 * - on expiry after `policy.timeout`: "expired" (`by: "timeout"`) when `on_timeout` is deny, or
 *   "approved" (`by: "timeout"`) when it is approve;
 * - on a stop of the run while waiting: "denied" with `by: "stop"`, and `request()` rejects at once
 *   with the run's abort reason.
 * Timers never keep the process alive and are cleared as soon as a request is answered.
 */
export class ApprovalBroker implements ApprovalGate {
  readonly #pending: PendingAnswers<Pending, ApprovalAnswer>;
  readonly #listeners = new Set<(approval: RequestedApproval) => void>();
  readonly #clock: Clock;
  readonly #createId: () => string;
  readonly #redact: <Value>(value: Value) => Value;

  constructor(options: ApprovalBrokerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#pending = new PendingAnswers(this.#clock);
    this.#createId = options.createId ?? (() => `a_${randomBytes(5).toString("hex")}`);
    this.#redact = options.redact ?? ((value) => value);
  }

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const { signal, policy } = request;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const requestedAt = new Date(this.#clock.now());
    const approval: RequestedApproval = {
      id: this.#createId(),
      agent: request.agent,
      run: request.run,
      tool: request.tool,
      arguments: request.arguments,
      reason: request.reason,
      on_timeout: policy.on_timeout,
      requested_at: requestedAt.toISOString(),
      expires_at: new Date(requestedAt.getTime() + policy.timeout).toISOString(),
    };
    const answered = this.#pending.wait(
      approval.id,
      { approval, request },
      {
        timeoutMilliseconds: policy.timeout,
        signal,
        onStop: () => this.#publish(request, approval.id, { state: "denied", by: "stop" }),
        onExpiry: () => {
          const approved = policy.on_timeout === "approve";
          this.#publish(request, approval.id, { state: approved ? "approved" : "expired", by: "timeout" });
          return approved
            ? { approved, state: "approved", scope: "once" }
            : { approved, state: "expired", scope: "once" };
        },
      },
    );
    this.#publish(request, approval.id, {
      state: "requested",
      arguments: request.arguments,
      expires_at: approval.expires_at,
      ...(request.reason === undefined ? {} : { reason: request.reason }),
    });
    // The reason quotes the agent file's rule (`bash(curl -H "…" *)`): masked with the arguments.
    const masked = this.#redact(approval);
    for (const listener of this.#listeners) listener(masked);
    return answered;
  }

  /** Answers a pending approval. Throws APPROVAL_NOT_FOUND for an unknown or already answered id. */
  decide(id: string, decision: "approve" | "deny", options: DecideOptions = {}): void {
    const pending = this.#pending.get(id);
    if (!pending) {
      throw new AgentdError("APPROVAL_NOT_FOUND", `no pending approval "${id}"`, {
        hint: "it was answered, expired or its run ended; agentd approvals lists the pending ones",
      });
    }
    const scope = options.scope ?? "once";
    const approved = decision === "approve";
    const state = approved ? "approved" : "denied";
    this.#pending.answer(id, { approved, state, scope });
    this.#publish(pending.request, id, {
      state,
      scope,
      by: options.by ?? "api",
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    });
  }

  /** The pending approvals, oldest first, arguments and reason masked. */
  list(): PendingApproval[] {
    return this.#pending.entries().map(({ approval }) =>
      this.#redact({
        id: approval.id,
        agent: approval.agent,
        run: approval.run,
        tool: approval.tool,
        arguments: approval.arguments,
        requested_at: approval.requested_at,
        expires_at: approval.expires_at,
        reason: approval.reason,
        on_timeout: approval.on_timeout,
      }),
    );
  }

  /**
   * Calls `listener` with every new request, arguments masked (the TTY prompt of `agentd run`).
   * Returns the function that unsubscribes.
   */
  onRequested(listener: (approval: RequestedApproval) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #publish(
    request: ApprovalRequest,
    id: string,
    data: Omit<EventDataByType["approval"], "id" | "tool">,
  ): void {
    request.events.publish({
      agent: request.agent,
      run: request.run,
      type: "approval",
      data: {
        id,
        tool: request.tool,
        ...data,
        ...(request.callId === undefined ? {} : { call_id: request.callId }),
      },
    });
  }
}
