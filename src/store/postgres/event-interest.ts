import type { EventDraft } from "../../events/agent-event.js";

/** How long an agent stays followed after its last follower left or its last write here. */
export const FOLLOW_LINGER_MILLISECONDS = 60_000;

interface Following {
  /** Followers holding it now (long polls, streams). */
  holds: number;
  /** Followed until then with no holder (monotonic milliseconds). */
  lingerUntil: number;
  /** Which stretch of following this is: a new one starts when an agent is followed again. */
  period: number;
}

/**
 * Which agents a node follows in full (every event, read from the store as it commits): those a
 * client of this node follows (a long poll, a stream, the merged feed for all of them) and those
 * this node writes events of (the runs it runs), each for a while after. The change feed reads the
 * other agents' notable events only (see NOTABLE_EVENTS_SQL).
 */
export class EventInterest {
  readonly #agents = new Map<string, Following>();
  #all: Following | undefined;
  #periods = 0;
  readonly #now: () => number;
  readonly #lingerMilliseconds: number;

  constructor(options: { now?: () => number; lingerMilliseconds?: number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#lingerMilliseconds = options.lingerMilliseconds ?? FOLLOW_LINGER_MILLISECONDS;
  }

  /** Follows `agent` (every agent when undefined) until the function returned is called, and a while after. */
  hold(agent: string | undefined): () => void {
    const following = this.#current(agent);
    following.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      following.holds -= 1;
      following.lingerUntil = Math.max(following.lingerUntil, this.#now() + this.#lingerMilliseconds);
    };
  }

  /** Follows these agents for a while: this node wrote events of them. */
  touch(agents: Iterable<string>): void {
    const until = this.#now() + this.#lingerMilliseconds;
    for (const agent of agents) {
      const following = this.#current(agent);
      following.lingerUntil = Math.max(following.lingerUntil, until);
    }
  }

  /**
   * The stretch of following of `agent` under way (a new value each time it is followed again
   * after a pause), or undefined when it is not followed.
   */
  period(agent: string): string | undefined {
    const own = this.#active(this.#agents.get(agent));
    const all = this.#active(this.#all);
    if (own === undefined && all === undefined) {
      this.#agents.delete(agent);
      return undefined;
    }
    return `${all?.period ?? ""}:${own?.period ?? ""}`;
  }

  /** Whether every agent is followed (a client of the merged feed). */
  followsAll(): boolean {
    return this.#active(this.#all) !== undefined;
  }

  follows(agent: string): boolean {
    return this.period(agent) !== undefined;
  }

  #active(following: Following | undefined): Following | undefined {
    if (following === undefined) return undefined;
    return following.holds > 0 || following.lingerUntil > this.#now() ? following : undefined;
  }

  /** The agent's stretch of following, a new one when it was not followed. */
  #current(agent: string | undefined): Following {
    const held = agent === undefined ? this.#all : this.#agents.get(agent);
    const active = this.#active(held);
    if (active !== undefined) return active;
    this.#periods += 1;
    const following: Following = { holds: 0, lingerUntil: 0, period: this.#periods };
    if (agent === undefined) this.#all = following;
    else this.#agents.set(agent, following);
    return following;
  }
}

/**
 * Whether this node writing `event` makes it follow the event's agent: the events of running a
 * run do. An audit entry (an answer or a stop given here for a run elsewhere) and the `queued`
 * status of a run posted here for any node to claim do not: otherwise every node behind a load
 * balancer would follow every agent again.
 */
export function followsOnWrite(event: EventDraft): boolean {
  if (event.type === "audit") return false;
  return !(event.type === "status" && event.data.status === "queued");
}
