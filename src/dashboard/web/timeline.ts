// A run's events as the rows of its timeline: each tool call together with its approval (when it
// asked) and its observation, each approval with its answer. Events arrive from the history and from the live stream, possibly
// twice around a reconnect: the id decides, an event already seen is dropped. The stream can bring
// a run's newest events before the history brings the older ones: the rows are then laid out again
// in id order, so an approval that came first still joins the call the history brought after it.

import type { AgentEvent } from "./api-types.js";

/** An approval request and, once there is one, its answer. */
export interface ApprovalState {
  requested: AgentEvent;
  answer: AgentEvent | undefined;
}

export type TimelineRow =
  | { kind: "event"; key: string; event: AgentEvent }
  | {
      kind: "call";
      key: string;
      action: AgentEvent;
      observation: AgentEvent | undefined;
      approval: ApprovalState | undefined;
    }
  | ({ kind: "approval"; key: string } & ApprovalState);

/** The rows of one run, built incrementally: `add` returns whether anything changed. */
export class Timeline {
  readonly rows: TimelineRow[] = [];
  #lastId = 0;
  readonly #seen = new Set<number>();
  /** Every event taken in, in the order placed (id order after a lay-out). */
  readonly #events: AgentEvent[] = [];
  readonly #callRows = new Map<string, number>();
  readonly #approvalRows = new Map<string, number>();

  constructor(readonly run: string) {}

  /** The highest event id taken in (for a reconnect's Last-Event-ID). */
  get lastId(): number {
    return this.#lastId;
  }

  add(events: readonly AgentEvent[]): boolean {
    let changed = false;
    let older = false;
    for (const event of events) {
      if (event.run !== this.run || this.#seen.has(event.id)) continue;
      this.#seen.add(event.id);
      this.#events.push(event);
      if (event.id < this.#lastId) older = true;
      else if (!older) this.#place(event);
      this.#lastId = Math.max(this.#lastId, event.id);
      changed = true;
    }
    if (older) this.#layOut();
    return changed;
  }

  /** Places every event again in id order: an older one arrived after newer ones. */
  #layOut(): void {
    this.#events.sort((left, right) => left.id - right.id);
    this.rows.length = 0;
    this.#callRows.clear();
    this.#approvalRows.clear();
    for (const event of this.#events) this.#place(event);
  }

  #place(event: AgentEvent): void {
    const callId = typeof event.data["call_id"] === "string" ? event.data["call_id"] : undefined;
    const approvalId = typeof event.data["id"] === "string" ? event.data["id"] : undefined;
    if (event.type === "action" && callId !== undefined) {
      this.#callRows.set(callId, this.rows.length);
      this.rows.push({
        kind: "call",
        key: `call-${event.id}`,
        action: event,
        observation: undefined,
        approval: undefined,
      });
      return;
    }
    if (event.type === "observation" && callId !== undefined) {
      const index = this.#callRows.get(callId) ?? -1;
      const row = this.rows[index];
      if (row?.kind === "call" && row.observation === undefined) {
        this.rows[index] = { ...row, observation: event };
        return;
      }
    }
    if (event.type === "approval" && approvalId !== undefined) {
      if (event.data["state"] === "requested") {
        this.#placeRequest(approvalId, event);
        return;
      }
      const index = this.#approvalRows.get(approvalId) ?? -1;
      const row = this.rows[index];
      if (row?.kind === "approval" && row.answer === undefined) {
        this.rows[index] = { ...row, answer: event };
        return;
      }
      if (row?.kind === "call" && row.approval !== undefined && row.approval.answer === undefined) {
        this.rows[index] = { ...row, approval: { ...row.approval, answer: event } };
        return;
      }
    }
    this.rows.push({ kind: "event", key: `event-${event.id}`, event });
  }

  /** A request joins the newest call of its tool still waiting (the call published just before). */
  #placeRequest(approvalId: string, event: AgentEvent): void {
    for (let index = this.rows.length - 1; index >= 0; index -= 1) {
      const row = this.rows[index];
      if (row?.kind !== "call" || row.action.data["tool"] !== event.data["tool"]) continue;
      if (row.observation !== undefined || row.approval !== undefined) break;
      this.rows[index] = { ...row, approval: { requested: event, answer: undefined } };
      this.#approvalRows.set(approvalId, index);
      return;
    }
    this.#approvalRows.set(approvalId, this.rows.length);
    this.rows.push({ kind: "approval", key: `approval-${event.id}`, requested: event, answer: undefined });
  }
}
