import { randomUUID } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";
import type { Clock } from "../clock/clock.js";
import type { Logger } from "../logging/logger.js";
import type { StorageGate } from "../util/storage-gate.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { AgentEvent } from "./agent-event.js";
import type { EventFeed } from "./event-bus.js";
import type { EventLog } from "./event-log.js";
import { EventRing } from "./event-ring.js";
import { EventWaiters } from "./event-waiters.js";
import { FileEventLog } from "./file-event-log.js";
import { type MergedLinesPage, readMergedFeed } from "./merged-feed.js";

export interface EventStoreOptions {
  dataDirectory: string;
  /** Events kept in memory per agent (config `events.buffer_size`). */
  bufferSize?: number;
  bus: EventFeed;
  logger: Logger;
  /** Where events are persisted; default: the JSONL files in `dataDirectory`. */
  log?: EventLog;
  /**
   * Told of each append that failed for lack of space: the event is refused with STORAGE_FULL,
   * which the bus holds it for (see EventBus), and of each that succeeded.
   */
  storage?: StorageGate;
  /** Ends long polls at their `wait` (default: the system clock). */
  clock?: Clock;
}

/** Which events a poll asks for. */
export interface PollRequest {
  /** Events with id > after (default 0: everything still in memory). */
  after?: number;
  /** At most this many (default 100). */
  limit?: number;
}

/** SPEC 6 poll response, with the events still as their stored JSON lines. */
export interface PollLinesPage {
  lines: string[];
  /** The id of each line. */
  ids: number[];
  /** The id to pass as `after` next time: the last returned id, or `after` when nothing is new. */
  next: number;
  /** Oldest id still in memory for the agent; null when the agent has no event in memory. */
  oldest: number | null;
  /** Events with id > after that are no longer in memory (0 normally). */
  missed: number;
}

/** SPEC 6 poll response. */
export interface PollPage extends Omit<PollLinesPage, "lines" | "ids"> {
  events: AgentEvent[];
}

/** GET /events response. */
export interface MergedPage extends Omit<MergedLinesPage, "lines"> {
  events: AgentEvent[];
}

const DEFAULT_BUFFER_SIZE = 200;
const DEFAULT_LIMIT = 100;
/** Merged-feed waiters wait under this key, which no agent id can take. */
const ANY_AGENT = "*";

/**
 * Every event, persisted and served: hands each event the bus publishes to the event log (the
 * files append synchronously, before anyone else sees it), keeps each agent's last N in a ring
 * buffer, answers cursor polls and releases long polls.
 */
export class EventStore {
  readonly #bufferSize: number;
  readonly #log: EventLog;
  readonly #storage: StorageGate | undefined;
  readonly #rings = new Map<string, EventRing>();
  readonly #lastIds = new Map<string, number>();
  /** Per agent, the store-wide sequence of its last stored event since open (see pageVersion). */
  readonly #changedAt = new Map<string, number>();
  readonly #waiters: EventWaiters;
  readonly #epoch = randomUUID();
  #lastSequence = 0;
  #unsubscribe: () => void = () => undefined;

  private constructor(options: EventStoreOptions) {
    this.#bufferSize = options.bufferSize ?? DEFAULT_BUFFER_SIZE;
    this.#storage = options.storage;
    this.#waiters = new EventWaiters(options.clock);
    this.#log =
      options.log ?? new FileEventLog({ dataDirectory: options.dataDirectory, logger: options.logger });
  }

  /**
   * Reads the tails of the logs on disk, continues every agent's ids on the bus, and subscribes to
   * the bus. Open it before anything else subscribes, so that events are on disk before any other
   * listener (stream, metrics) sees them.
   */
  static async open(options: EventStoreOptions): Promise<EventStore> {
    const store = new EventStore(options);
    for (const log of await store.#log.load(store.#bufferSize)) {
      const ring = store.#ringOf(log.agent);
      for (const event of log.events) ring.push(event.id, event.sequence, event.time, event.line);
      store.#lastSequence += log.events.length;
      store.#lastIds.set(log.agent, log.lastId);
      options.bus.seed(log.agent, log.lastId);
    }
    store.#unsubscribe = options.bus.subscribe((event) => store.#append(event), { complete: true });
    return store;
  }

  /**
   * Follows the agent's events (every agent's when undefined) until the function it resolves with
   * is called: on a cluster a node holds in full only the agents it runs or a client follows. Call
   * before a poll, a stream or the merged feed; resolves once the latest events are here.
   */
  follow(agent: string | undefined): Promise<() => void> {
    return this.#log.follow?.(agent) ?? Promise.resolve(() => undefined);
  }

  /**
   * Whether every agent is followed always (a log of this node's own, not a cluster's shared
   * store): a poll or a stream need not call `follow`, nor wait for it.
   */
  get followsEveryAgent(): boolean {
    return this.#log.follow === undefined;
  }

  /** Events read from a shared store since start, per agent (empty for the files). */
  eventsRead(): ReadonlyMap<string, number> {
    return this.#log.eventsRead?.() ?? new Map();
  }

  /** Agents that have events (in memory or on disk at start). */
  agents(): string[] {
    return [...this.#rings.keys()];
  }

  has(agent: string): boolean {
    return this.#rings.has(agent);
  }

  /** The last id given to the agent's events, 0 when none. */
  lastId(agent: string): number {
    return this.#lastIds.get(agent) ?? 0;
  }

  /**
   * A number that changes whenever an answer of `pollLines` for the agent may change: each event of
   * the agent stored since open gives it a value no agent had before (the store-wide sequence, which
   * only grows). A page read at one version is the page any later read at that version gets: the
   * API keeps a poll's body while it stays the same.
   */
  pageVersion(agent: string): number {
    return this.#changedAt.get(agent) ?? 0;
  }

  /** SPEC 6 poll: the agent's events with id > after, from memory, oldest first. */
  poll(agent: string, request: PollRequest = {}): PollPage {
    const { lines, ids: _ids, ...page } = this.pollLines(agent, request);
    return { events: lines.map(parseLine), ...page };
  }

  /** `poll`, with the events as the JSON lines they are stored as (what the HTTP API sends). */
  pollLines(agent: string, request: PollRequest = {}): PollLinesPage {
    const after = request.after ?? 0;
    const limit = request.limit ?? DEFAULT_LIMIT;
    const ring = this.#rings.get(agent);
    const slice = ring?.afterId(after, limit);
    const oldest = ring?.oldestId ?? null;
    const firstInMemory = oldest ?? this.lastId(agent) + 1;
    return {
      lines: slice?.lines ?? [],
      ids: slice?.ids ?? [],
      next: slice?.ids.at(-1) ?? after,
      oldest,
      missed: Math.max(0, firstInMemory - 1 - after),
    };
  }

  /**
   * Resolves at once when the agent already has an event with id > after; otherwise when one
   * arrives, after `milliseconds`, or when `signal` aborts (the client went away).
   */
  wait(agent: string, after: number, milliseconds: number, signal?: AbortSignal): Promise<void> {
    // What a poll can serve: after a damaged log, the last id may be above every event in memory.
    if ((this.#rings.get(agent)?.newestId ?? 0) > after) return Promise.resolve();
    return this.#waiters.wait(agent, after, milliseconds, signal);
  }

  /** The merged feed of every agent (GET /events), with an opaque cursor. */
  merged(cursor: string | undefined, limit = DEFAULT_LIMIT): MergedPage {
    const { lines, ...page } = this.mergedLines(cursor, limit);
    return { events: lines.map(parseLine), ...page };
  }

  /** `merged`, with the events as their stored JSON lines. Throws BAD_REQUEST for a bad cursor. */
  mergedLines(cursor: string | undefined, limit = DEFAULT_LIMIT): MergedLinesPage {
    return readMergedFeed(
      { rings: this.#rings, epoch: this.#epoch, lastSequence: this.#lastSequence },
      cursor,
      limit,
    );
  }

  /** Resolves on the next event of any agent, after `milliseconds`, or when `signal` aborts. */
  waitForAny(milliseconds: number, signal?: AbortSignal): Promise<void> {
    return this.#waiters.wait(ANY_AGENT, 0, milliseconds, signal);
  }

  /** A run's whole persisted log (events with id > after), `agent` its agent. Empty when there is none. */
  async runEvents(run: string, after = 0, agent?: string, limit?: number): Promise<AgentEvent[]> {
    const logged = await this.#log.runEvents(run, after, agent, limit);
    return logged.map(({ line }) => parseLine(line));
  }

  /**
   * The agent's persisted events with id > after: for a reader that fell behind the ring buffer
   * (the stream's Last-Event-ID replay).
   */
  history(
    agent: string,
    after: number,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<Array<{ id: number; line: string }>> {
    return this.#log.history(agent, after, limit);
  }

  /** A new run's log waits, its lines in memory, until the run launches (see EventLog.holdRun). */
  holdRun(run: string, agent: string): void {
    this.#log.holdRun?.(run, agent);
  }

  /** Creates a held run's log off the event loop (see EventLog.openRun). Never rejects. */
  openRun(run: string): Promise<void> {
    return this.#log.openRun?.(run) ?? Promise.resolve();
  }

  /** Long polls waiting right now (all agents). */
  get waiting(): number {
    return this.#waiters.pending;
  }

  /** Stops listening to the bus and releases every long poll. */
  close(): void {
    this.#unsubscribe();
    this.#waiters.releaseAll();
    this.#log.close();
  }

  #append(event: AgentEvent): void {
    const line = JSON.stringify(event);
    try {
      this.#log.append(event, line);
    } catch (error) {
      // Written to its agent's log and to its run's log: room for both is needed.
      const bytes = (Buffer.byteLength(line) + 1) * (event.run === null ? 1 : 2);
      if (!this.#storage?.failed(error, undefined, bytes)) throw error;
      throw new AgentdError(
        "STORAGE_FULL",
        `event ${event.id} of ${event.agent} waits for room in the store`,
        {
          hint: "free space in data_dir: held events are written, in order, as soon as it has room",
          cause: error,
        },
      );
    }
    this.#storage?.succeeded();
    this.#lastSequence++;
    // An agent followed again after a pause (a cluster) comes back from its latest events: the
    // ring never holds a gap, the events in between are read from the log.
    if (event.id > this.lastId(event.agent) + 1) this.#rings.delete(event.agent);
    this.#lastIds.set(event.agent, event.id);
    this.#ringOf(event.agent).push(event.id, this.#lastSequence, Date.parse(event.time) || 0, line);
    this.#changedAt.set(event.agent, this.#lastSequence);
    if (event.type === "status" && event.run !== null && isTerminal(event.data.status)) {
      this.#log.runEnded(event.run, event.agent);
    }
    this.#waiters.notify(event.agent, event.id);
    this.#waiters.notify(ANY_AGENT, 1);
  }

  #ringOf(agent: string): EventRing {
    let ring = this.#rings.get(agent);
    if (!ring) {
      ring = new EventRing(this.#bufferSize);
      this.#rings.set(agent, ring);
    }
    return ring;
  }
}

/** Lines come from JSON.stringify of bus events (or their copy on disk): no schema needed again. */
function parseLine(line: string): AgentEvent {
  return JSON.parse(line) as AgentEvent;
}
