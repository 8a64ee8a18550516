import type { AgentEvent, EventDraft } from "./agent-event.js";

export type EventListener = (event: AgentEvent) => void;

/** Anything that publishes events: the loop, the workers, the tool executor, the scheduler. */
export interface EventPublisher {
  /** Gives the draft its id and time and hands it on (with a shared store, once it is written). */
  publish(draft: EventDraft): void;
}

/** What the event store follows: every event as it is born, and the ids persisted before start. */
export interface EventFeed {
  /** Returns the function that unsubscribes. */
  subscribe(listener: EventListener): () => void;
  /** Continues an agent's ids after `lastId` (from the store at start-up). */
  seed(agent: string, lastId: number): void;
}

/** The daemon's event bus, whichever store assigns the ids: publish, follow, and the last ids. */
export interface EventHub extends EventPublisher, EventFeed {
  lastId(agent: string): number;
}

export interface EventBusOptions {
  /** Masks secret values in a draft before it gets an id (the vault's redactor). */
  redact?: (draft: EventDraft) => EventDraft;
  now?: () => Date;
}

/**
 * The one place events are born: assigns the next per-agent id and the time, then hands the event
 * to every listener in subscription order (the persistent store subscribes first, so an event is on
 * disk before any reader can see it).
 */
export class EventBus implements EventHub {
  readonly #lastIds = new Map<string, number>();
  readonly #listeners = new Set<EventListener>();
  readonly #redact: (draft: EventDraft) => EventDraft;
  readonly #now: () => Date;

  constructor(options: EventBusOptions = {}) {
    this.#redact = options.redact ?? ((draft) => draft);
    this.#now = options.now ?? (() => new Date());
  }

  /** Continues an agent's ids after `lastId` (from disk at start-up). */
  seed(agent: string, lastId: number): void {
    if (lastId > (this.#lastIds.get(agent) ?? 0)) this.#lastIds.set(agent, lastId);
  }

  lastId(agent: string): number {
    return this.#lastIds.get(agent) ?? 0;
  }

  publish(draft: EventDraft): AgentEvent {
    const safe = this.#redact(draft);
    const id = (this.#lastIds.get(safe.agent) ?? 0) + 1;
    this.#lastIds.set(safe.agent, id);
    const event = {
      id,
      agent: safe.agent,
      run: safe.run,
      type: safe.type,
      time: this.#now().toISOString(),
      data: safe.data,
    } as AgentEvent;
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  /** Returns the function that unsubscribes. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
