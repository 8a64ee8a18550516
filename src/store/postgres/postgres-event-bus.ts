import type { AgentEvent, EventDraft } from "../../events/agent-event.js";
import type { EventHub, EventListener, SubscribeOptions } from "../../events/event-bus.js";
import type { PostgresWriter } from "./postgres-writer.js";

/**
 * The event bus of a node on PostgreSQL. `publish` hands the draft to the writer, which gives it
 * the agent's next id in the transaction that inserts it; listeners get events (of every node) from
 * the change feed once committed, so nothing is seen before it is durable and ids are the cluster's.
 * Listeners that asked for complete sequences (the event store, streams) get the events of the
 * agents this node follows; the others get those too and the notable events of every other agent,
 * each event once.
 */
export class PostgresEventBus implements EventHub {
  /** The last id handed to the complete listeners, per agent. */
  readonly #lastIds = new Map<string, number>();
  /** The last id handed to the other listeners, per agent. */
  readonly #lastNotable = new Map<string, number>();
  readonly #complete = new Set<EventListener>();
  readonly #listeners = new Set<EventListener>();
  readonly #writer: PostgresWriter;
  readonly #redact: (draft: EventDraft) => EventDraft;
  readonly #now: () => Date;
  readonly #onPublish: ((draft: EventDraft) => void) | undefined;

  /** `onPublish`: told of each draft as it is handed to the writer. */
  constructor(options: {
    writer: PostgresWriter;
    redact?: (draft: EventDraft) => EventDraft;
    now?: () => Date;
    onPublish?: (draft: EventDraft) => void;
  }) {
    this.#writer = options.writer;
    this.#onPublish = options.onPublish;
    this.#redact = options.redact ?? ((draft) => draft);
    this.#now = options.now ?? (() => new Date());
  }

  publish(draft: EventDraft): void {
    const safe = this.#redact(draft);
    this.#onPublish?.(safe);
    this.#writer.enqueue({ kind: "event", draft: { ...safe, time: this.#now().toISOString() } });
  }

  seed(agent: string, lastId: number): void {
    if (lastId > (this.#lastIds.get(agent) ?? 0)) this.#lastIds.set(agent, lastId);
    if (lastId > (this.#lastNotable.get(agent) ?? 0)) this.#lastNotable.set(agent, lastId);
  }

  lastId(agent: string): number {
    return this.#lastIds.get(agent) ?? 0;
  }

  subscribe(listener: EventListener, options: SubscribeOptions = {}): () => void {
    const listeners = options.complete === true ? this.#complete : this.#listeners;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Committed events of an agent this node follows, from the change feed, in order. */
  deliver(event: AgentEvent): void {
    if (event.id > this.lastId(event.agent)) {
      this.#lastIds.set(event.agent, event.id);
      for (const listener of this.#complete) listener(event);
    }
    this.deliverNotable(event);
  }

  /** A notable event of an agent this node does not follow: for the listeners of every agent. */
  deliverNotable(event: AgentEvent): void {
    if (event.id <= (this.#lastNotable.get(event.agent) ?? 0)) return;
    this.#lastNotable.set(event.agent, event.id);
    for (const listener of this.#listeners) listener(event);
  }
}
