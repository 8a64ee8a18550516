import { randomUUID } from "node:crypto";
import { AgentdError } from "../errors/agentd-error.js";
import type { Clock } from "../clock/clock.js";
import type { Logger } from "../logging/logger.js";
import { isoTextTime } from "../util/iso-time.js";
import type { StorageGate } from "../util/storage-gate.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { AgentEvent } from "./agent-event.js";
import type { EventFeed } from "./event-bus.js";
import type { EventLog } from "./event-log.js";
import { DEFAULT_LARGE_LINE_CHARS, EventRing, type RingLine } from "./event-ring.js";
import { EventWaiters } from "./event-waiters.js";
import { FileEventLog } from "./file-event-log.js";
import { idsOnDisk, readLinesOnDisk } from "./lines-on-disk.js";
import { type MergedLinesPage, type MergedRingPage, readMergedFeed } from "./merged-feed.js";

export interface EventStoreOptions {
  dataDirectory: string;
  /** Events kept in memory per agent (config `events.buffer_size`). */
  bufferSize?: number;
  /**
   * Lines longer than this (characters) are kept in memory as stand-ins and read from the log when
   * served (default 64 KiB): memory per agent stays below bufferSize × largeLineChars.
   */
  largeLineChars?: number;
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
  /** Every line is here whole (see PollRingPage). */
  whole: true;
  lines: string[];
  /** The id of each line. */
  ids: number[];
  /** The id to pass as `after` next time: the last returned id, or `after` when nothing is new. */
  next: number;
  /** Oldest id still in memory for the agent; null when the agent has no event in memory. */
  oldest: number | null;
  /**
   * Events with id > after that are no longer in memory (0 normally), and long lines kept on disk
   * only that were gone from there too (deleted past retention) when the page was read.
   */
  missed: number;
}

/** A poll page as the ring holds it: some long lines are stand-ins to read from the log first. */
export interface PollRingPage extends Omit<PollLinesPage, "whole" | "lines"> {
  whole: false;
  lines: RingLine[];
}

/** SPEC 6 poll response. */
export interface PollPage extends Omit<PollLinesPage, "whole" | "lines" | "ids"> {
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
  readonly #largeLineChars: number;
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
    this.#largeLineChars = options.largeLineChars ?? DEFAULT_LARGE_LINE_CHARS;
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
    for (const log of await store.#log.load(store.#bufferSize, store.#largeLineChars)) {
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

  /**
   * SPEC 6 poll: the agent's events with id > after, from memory, oldest first. Throws for a page
   * holding a line kept on disk only (longer than `largeLineChars`): `readPoll` reads those.
   */
  poll(agent: string, request: PollRequest = {}): PollPage {
    const page = this.pollLines(agent, request);
    if (!page.whole) throw keptOnDisk(agent);
    return toPollPage(page);
  }

  /** `poll`, reading from the log the long lines the ring keeps as stand-ins. */
  async readPoll(agent: string, request: PollRequest = {}): Promise<PollPage> {
    return toPollPage(await this.readPollLines(agent, request));
  }

  /**
   * `poll`, with the events as the JSON lines they are stored as (what the HTTP API sends). A page
   * holding a long line kept on disk only comes back not `whole`: `readWholePage` completes it.
   */
  pollLines(agent: string, request: PollRequest = {}): PollLinesPage | PollRingPage {
    const after = request.after ?? 0;
    const limit = request.limit ?? DEFAULT_LIMIT;
    const ring = this.#rings.get(agent);
    const slice = ring?.afterId(after, limit);
    const oldest = ring?.oldestId ?? null;
    const firstInMemory = oldest ?? this.lastId(agent) + 1;
    const ids = slice?.ids ?? [];
    const next = ids.at(-1) ?? after;
    const missed = Math.max(0, firstInMemory - 1 - after);
    if (slice !== undefined && slice.onDisk > 0) {
      return { whole: false, lines: slice.lines, ids, next, oldest, missed };
    }
    // No stand-in among them: every line is a string.
    return { whole: true, lines: (slice?.lines ?? []) as string[], ids, next, oldest, missed };
  }

  /** `pollLines`, whole: the long lines kept on disk only read from the log. */
  readPollLines(agent: string, request: PollRequest = {}): Promise<PollLinesPage> {
    const page = this.pollLines(agent, request);
    return page.whole ? Promise.resolve(page) : this.readWholePage(agent, page);
  }

  /**
   * The page with its stand-ins replaced by their lines, read from the agent's log. A line gone
   * from there (its segment deleted past retention) is left out and counted in `missed`.
   */
  async readWholePage(agent: string, page: PollRingPage): Promise<PollLinesPage> {
    const found = await readLinesOnDisk(this.#log, agent, idsOnDisk(page.ids, page.lines));
    const lines: string[] = [];
    const ids: number[] = [];
    let gone = 0;
    page.lines.forEach((line, index) => {
      const id = page.ids[index] ?? 0;
      const whole = typeof line === "string" ? line : found.get(id);
      if (whole === undefined) {
        gone++;
        return;
      }
      lines.push(whole);
      ids.push(id);
    });
    return { ...page, whole: true, lines, ids, missed: page.missed + gone };
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

  /**
   * The merged feed of every agent (GET /events), with an opaque cursor. Throws for a page holding
   * a line kept on disk only: `mergedLines` reads those.
   */
  merged(cursor: string | undefined, limit = DEFAULT_LIMIT): MergedPage {
    const { lines, agents, ids: _ids, onDisk, ...page } = this.#mergedRing(cursor, limit);
    if (onDisk > 0) throw keptOnDisk(agents.find((_agent, index) => typeof lines[index] !== "string") ?? "");
    return { events: (lines as string[]).map(parseLine), ...page };
  }

  /**
   * `merged`, with the events as their stored JSON lines, the long ones read from the log (one
   * gone from there is left out and counted in `missed`). Throws BAD_REQUEST for a bad cursor.
   */
  async mergedLines(cursor: string | undefined, limit = DEFAULT_LIMIT): Promise<MergedLinesPage> {
    const { lines, agents, ids, onDisk, ...page } = this.#mergedRing(cursor, limit);
    if (onDisk === 0) return { lines: lines as string[], ...page };
    const byAgent = new Map<string, number[]>();
    lines.forEach((line, index) => {
      if (typeof line === "string") return;
      const agent = agents[index] ?? "";
      byAgent.set(agent, [...(byAgent.get(agent) ?? []), ids[index] ?? 0]);
    });
    const found = new Map<string, Map<number, string>>();
    for (const [agent, onDiskIds] of byAgent) {
      found.set(agent, await readLinesOnDisk(this.#log, agent, onDiskIds));
    }
    const whole: string[] = [];
    lines.forEach((line, index) => {
      const text = typeof line === "string" ? line : found.get(agents[index] ?? "")?.get(ids[index] ?? 0);
      if (text !== undefined) whole.push(text);
    });
    return { ...page, lines: whole, missed: page.missed + lines.length - whole.length };
  }

  #mergedRing(cursor: string | undefined, limit: number): MergedRingPage {
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

  /** Characters of event text the rings hold (long lines kept on disk count nothing). */
  retainedChars(): number {
    let chars = 0;
    for (const ring of this.#rings.values()) chars += ring.retainedChars();
    return chars;
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
    this.#ringOf(event.agent).push(event.id, this.#lastSequence, isoTextTime(event.time) || 0, line);
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
      ring = new EventRing(this.#bufferSize, this.#largeLineChars);
      this.#rings.set(agent, ring);
    }
    return ring;
  }
}

function toPollPage(page: PollLinesPage): PollPage {
  const { lines, ids: _ids, whole: _whole, ...rest } = page;
  return { events: lines.map(parseLine), ...rest };
}

function keptOnDisk(agent: string): AgentdError {
  return new AgentdError(
    "INTERNAL",
    `a page of ${agent}'s events holds a line kept on disk only: read it with readPoll or mergedLines`,
  );
}

/** Lines come from JSON.stringify of bus events (or their copy on disk): no schema needed again. */
function parseLine(line: string): AgentEvent {
  return JSON.parse(line) as AgentEvent;
}
