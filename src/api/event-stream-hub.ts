import type { AgentEvent } from "../events/agent-event.js";
import type { EventFeed } from "../events/event-bus.js";
import type { Principal } from "./api-auth.js";

/** An open event stream as the hub sees it. */
export interface HubStream {
  /** The agent whose events it streams. */
  readonly agent: string;
  /** Who opened it (none on a server without authentication). */
  readonly principal: Principal | undefined;
  /** Takes one of the agent's events as it is published. */
  offer(event: AgentEvent): void;
  /** Writes a comment that keeps an idle connection open. */
  heartbeat(): void;
  /** Ends the stream (the server shuts down, its token was revoked). */
  end(): void;
}

/**
 * What the open event streams share, so that opening one costs a set insertion: one subscription
 * to the bus that hands each event to the streams of its agent only, and one timer that writes
 * every stream's heartbeat. Both start with the first stream and stay while streams come and go:
 * they stop at the first heartbeat that finds no stream open (or when all are ended), not as the
 * last one closes, so that replays which open and close one after another do not subscribe and
 * set a timer each. The timer never keeps the process alive on its own. Streams are objects with
 * methods, so that opening one makes no closure. A stream's first heartbeat comes within one
 * interval of its opening, each next one an interval later.
 */
export class EventStreamHub {
  readonly #bus: EventFeed;
  readonly #heartbeatMilliseconds: number;
  readonly #byAgent = new Map<string, Set<HubStream>>();
  #open = 0;
  #unsubscribe: (() => void) | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  readonly #lapsed: ((stream: HubStream) => boolean) | undefined;

  /**
   * `lapsed`: whether a stream's credentials no longer count, asked of each stream at each
   * heartbeat, which ends it instead: what lapses with no change to tell (a browser session that
   * ran out) ends within one interval.
   */
  constructor(bus: EventFeed, heartbeatMilliseconds: number, lapsed?: (stream: HubStream) => boolean) {
    this.#bus = bus;
    this.#heartbeatMilliseconds = heartbeatMilliseconds;
    this.#lapsed = lapsed;
  }

  /** Adds an open stream: it takes its agent's events from now on. */
  add(stream: HubStream): void {
    let streams = this.#byAgent.get(stream.agent);
    if (streams === undefined) {
      streams = new Set();
      this.#byAgent.set(stream.agent, streams);
    }
    const size = streams.size;
    streams.add(stream);
    if (streams.size === size) return;
    this.#open++;
    if (this.#heartbeat === undefined) this.#start();
  }

  /** Removes a stream `add` added (again, or one never added: nothing). */
  remove(stream: HubStream): void {
    const streams = this.#byAgent.get(stream.agent);
    if (streams === undefined || !streams.delete(stream)) return;
    // An agent's set stays, empty, for its next stream (replays of one agent come one after
    // another); the sets go when the hub stops.
    this.#open--;
  }

  /** Open streams. */
  get size(): number {
    return this.#open;
  }

  /** Ends every open stream, and stops the subscription and the timer. */
  endAll(): void {
    for (const streams of [...this.#byAgent.values()]) {
      for (const stream of [...streams]) stream.end();
    }
    if (this.#open === 0) this.#stop();
  }

  /** Ends every open stream `ended` picks (one whose token was revoked, whose session ended). */
  endWhere(ended: (stream: HubStream) => boolean): void {
    for (const streams of this.#byAgent.values()) {
      for (const stream of [...streams]) if (ended(stream)) stream.end();
    }
  }

  /** Whether the bus subscription and the heartbeat timer are running. */
  get running(): boolean {
    return this.#heartbeat !== undefined;
  }

  #start(): void {
    // `complete`: each agent's events gap-free, as the streams' replays read them from the store.
    this.#unsubscribe = this.#bus.subscribe((event) => this.#deliver(event), { complete: true });
    this.#heartbeat = setInterval(() => this.#beat(), this.#heartbeatMilliseconds);
    this.#heartbeat.unref();
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#byAgent.clear();
  }

  #deliver(event: AgentEvent): void {
    const streams = this.#byAgent.get(event.agent);
    if (streams === undefined) return;
    for (const stream of streams) stream.offer(event);
  }

  #beat(): void {
    if (this.#open === 0) {
      this.#stop();
      return;
    }
    const lapsed = this.#lapsed;
    for (const streams of this.#byAgent.values()) {
      // Copied: a lapsed stream's end removes it from its set.
      for (const stream of lapsed === undefined ? streams : [...streams]) {
        if (lapsed?.(stream) === true) stream.end();
        else stream.heartbeat();
      }
    }
  }
}
