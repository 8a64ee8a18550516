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

/** A stream's place in the hub: what `add` answers, and what `remove` takes to take it out. */
export interface HubMembership {
  readonly stream: HubStream;
}

/** One agent's open streams, as a list linked through their memberships. */
interface AgentStreams {
  first: Member | undefined;
}

/** A membership: a link of its agent's list (`list` undefined once removed). */
interface Member extends HubMembership {
  list: AgentStreams | undefined;
  previous: Member | undefined;
  next: Member | undefined;
}

/**
 * What the open event streams share, so that opening one costs a link in a list: one subscription
 * to the bus that hands each event to the streams of its agent only, and one timer that writes
 * every stream's heartbeat. Both start with the first stream and stay while streams come and go:
 * they stop at the first heartbeat that finds no stream open (or when all are ended), not as the
 * last one closes, so that replays which open and close one after another do not subscribe and
 * set a timer each. The timer never keeps the process alive on its own. Streams are objects with
 * methods, so that opening one makes no closure. A stream's first heartbeat comes within one
 * interval of its opening, each next one an interval later.
 *
 * Each agent's streams are a linked list, not a Set: a replay that opens and closes adds and
 * removes the only member of its agent's set, and a Set that empties shrinks its table (a call
 * into the engine and a new table), to grow it again for the next replay.
 */
export class EventStreamHub {
  readonly #bus: EventFeed;
  readonly #heartbeatMilliseconds: number;
  readonly #byAgent = new Map<string, AgentStreams>();
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

  /** Adds an open stream: it takes its agent's events from now on, until `remove` of the answer. */
  add(stream: HubStream): HubMembership {
    let list = this.#byAgent.get(stream.agent);
    if (list === undefined) {
      list = { first: undefined };
      this.#byAgent.set(stream.agent, list);
    }
    const member: Member = { stream, list, previous: undefined, next: list.first };
    if (list.first !== undefined) list.first.previous = member;
    list.first = member;
    this.#open++;
    if (this.#heartbeat === undefined) this.#start();
    return member;
  }

  /** Takes out the stream of a membership `add` answered (again: nothing). */
  remove(membership: HubMembership): void {
    const member = membership as Member;
    const list = member.list;
    if (list === undefined) return;
    // An agent's list stays, empty, for its next stream (replays of one agent come one after
    // another); the lists go when the hub stops. `next` stays: a walk of the list that stands on
    // this member goes on from it.
    if (member.previous === undefined) list.first = member.next;
    else member.previous.next = member.next;
    if (member.next !== undefined) member.next.previous = member.previous;
    member.list = undefined;
    this.#open--;
  }

  /** Open streams. */
  get size(): number {
    return this.#open;
  }

  /** Ends every open stream, and stops the subscription and the timer. */
  endAll(): void {
    for (const list of [...this.#byAgent.values()]) each(list, (stream) => stream.end());
    if (this.#open === 0) this.#stop();
  }

  /** Ends every open stream `ended` picks (one whose token was revoked, whose session ended). */
  endWhere(ended: (stream: HubStream) => boolean): void {
    for (const list of this.#byAgent.values()) {
      each(list, (stream) => {
        if (ended(stream)) stream.end();
      });
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
    const list = this.#byAgent.get(event.agent);
    if (list === undefined) return;
    for (let member = list.first; member !== undefined; member = member.next) {
      if (member.list !== undefined) member.stream.offer(event);
    }
  }

  #beat(): void {
    if (this.#open === 0) {
      this.#stop();
      return;
    }
    const lapsed = this.#lapsed;
    for (const list of this.#byAgent.values()) {
      each(list, (stream) => {
        if (lapsed?.(stream) === true) stream.end();
        else stream.heartbeat();
      });
    }
  }
}

/**
 * Calls `visit` with each stream of the list, the streams `visit` removes (its own, by ending it)
 * included: a removed member keeps its `next`. Streams added meanwhile come first, and are not
 * visited.
 */
function each(list: AgentStreams, visit: (stream: HubStream) => void): void {
  for (let member = list.first; member !== undefined; member = member.next) {
    if (member.list !== undefined) visit(member.stream);
  }
}
