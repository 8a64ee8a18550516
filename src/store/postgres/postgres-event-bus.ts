import type { AgentEvent, EventDraft } from "../../events/agent-event.js";
import type { EventHub, EventListener } from "../../events/event-bus.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * The event bus of a node on PostgreSQL. `publish` hands the draft to the writer, which gives it
 * the agent's next id in the transaction that inserts it; listeners get events (of every node) from
 * the change feed once committed, so nothing is seen before it is durable and ids are the cluster's.
 */
export class PostgresEventBus implements EventHub {
  readonly #lastIds = new Map<string, number>();
  readonly #listeners = new Set<EventListener>();
  readonly #writer: PostgresWriter;
  readonly #redact: (draft: EventDraft) => EventDraft;
  readonly #now: () => Date;

  constructor(options: {
    writer: PostgresWriter;
    redact?: (draft: EventDraft) => EventDraft;
    now?: () => Date;
  }) {
    this.#writer = options.writer;
    this.#redact = options.redact ?? ((draft) => draft);
    this.#now = options.now ?? (() => new Date());
  }

  publish(draft: EventDraft): void {
    const safe = this.#redact(draft);
    this.#writer.enqueue({ kind: "event", draft: { ...safe, time: this.#now().toISOString() } });
  }

  seed(agent: string, lastId: number): void {
    if (lastId > (this.#lastIds.get(agent) ?? 0)) this.#lastIds.set(agent, lastId);
  }

  lastId(agent: string): number {
    return this.#lastIds.get(agent) ?? 0;
  }

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Committed events from the change feed, in order. */
  deliver(event: AgentEvent): void {
    if (event.id <= this.lastId(event.agent)) return;
    this.#lastIds.set(event.agent, event.id);
    for (const listener of this.#listeners) listener(event);
  }
}
