import { AgentdError } from "../errors/agentd-error.js";
import { isoTime } from "../util/iso-time.js";
import type { AgentEvent, EventDraft } from "./agent-event.js";

export type EventListener = (event: AgentEvent) => void;

/** Anything that publishes events: the loop, the workers, the tool executor, the scheduler. */
export interface EventPublisher {
  /** Gives the draft its id and time and hands it on (with a shared store, once it is written). */
  publish(draft: EventDraft): void;
}

/** How a listener follows the bus. */
export interface SubscribeOptions {
  /**
   * Only complete sequences: each agent's events gap-free, as on one node. On a cluster a node
   * reads in full only the agents it runs or a client of it follows; a listener without this
   * also gets the notable events (approvals, questions, a run's end) of every other agent.
   */
  complete?: boolean;
}

/** What the event store follows: every event as it is born, and the ids persisted before start. */
export interface EventFeed {
  /** Returns the function that unsubscribes. */
  subscribe(listener: EventListener, options?: SubscribeOptions): () => void;
  /** Continues an agent's ids after `lastId` (from the store at start-up). */
  seed(agent: string, lastId: number): void;
}

/** The daemon's event bus, whichever store assigns the ids: publish, follow, and the last ids. */
export interface EventHub extends EventPublisher, EventFeed {
  lastId(agent: string): number;
}

/**
 * Events born and not yet stored (the store is full) kept at most: past it, a new event is refused
 * before it gets an id (STORAGE_FULL thrown to its publisher). Runs halt while the store is full,
 * so only what was under way when it filled up comes here.
 */
const MAX_HELD_EVENTS = 50_000;

export interface EventBusOptions {
  /** Masks secret values in a draft before it gets an id (the vault's redactor). */
  redact?: (draft: EventDraft) => EventDraft;
  now?: () => Date;
}

/**
 * The one place events are born: assigns the next per-agent id and the time, then hands the event
 * to every listener in subscription order (the persistent store subscribes first, so an event is on
 * disk before any reader can see it).
 *
 * When the store cannot take an event for lack of space (its listener throws STORAGE_FULL), the
 * event is held here, and every event after it too, in order, seen by no other listener;
 * `releaseHeld()` (the store has room again) hands them on in that order. Nothing is reported
 * before it is stored, and no id is skipped.
 */
export class EventBus implements EventHub {
  readonly #lastIds = new Map<string, number>();
  readonly #listeners = new Set<EventListener>();
  readonly #redact: (draft: EventDraft) => EventDraft;
  readonly #now: () => Date;
  #held: AgentEvent[] = [];

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
    if (this.#held.length >= MAX_HELD_EVENTS) {
      throw new AgentdError("STORAGE_FULL", `the store is full and ${MAX_HELD_EVENTS} events wait for it`, {
        hint: "free space in data_dir: the events held are written as soon as it has room",
      });
    }
    const safe = this.#redact(draft);
    const id = (this.#lastIds.get(safe.agent) ?? 0) + 1;
    this.#lastIds.set(safe.agent, id);
    const event = {
      id,
      agent: safe.agent,
      run: safe.run,
      type: safe.type,
      time: isoTime(this.#now()),
      data: safe.data,
    } as AgentEvent;
    if (this.#held.length > 0 || !this.#deliver(event)) this.#held.push(event);
    return event;
  }

  /** Events waiting for the store to have room (0 normally). */
  get held(): number {
    return this.#held.length;
  }

  /**
   * Hands the held events on, oldest first, until the store refuses one again (it is still full):
   * that one and the rest stay held. A listener's other failure is not the publisher's any more
   * (it went on long ago): that event goes on to the next listeners.
   */
  releaseHeld(): void {
    const held = this.#held;
    let next = 0;
    // Events a listener publishes meanwhile join the same list, behind the held ones.
    for (; next < held.length; next++) {
      let delivered: boolean;
      try {
        delivered = this.#deliver(held[next] as AgentEvent);
      } catch {
        delivered = true;
      }
      if (!delivered) break;
    }
    this.#held = held.slice(next);
  }

  /** Hands the event to every listener; false when the first (the store) has no room for it. */
  #deliver(event: AgentEvent): boolean {
    let first = true;
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        if (first && AgentdError.is(error, "STORAGE_FULL")) return false;
        throw error;
      }
      first = false;
    }
    return true;
  }

  /** Returns the function that unsubscribes. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
