import type pg from "pg";
import type { EventLog, PersistedLine } from "../../events/event-log.js";
import type { LoadedAgentLog } from "../../events/load-agent-logs.js";
import { DEFAULT_LARGE_LINE_CHARS, ringLine } from "../../events/event-ring.js";

/**
 * Events in PostgreSQL: written by the writer with their ids before anyone sees them (so `append`
 * has nothing left to do), read back for history and run logs.
 */
export class PostgresEventLog implements EventLog {
  readonly #pool: pg.Pool;
  /** The tails read at start, until `load` hands them over (not held after). */
  #loaded: LoadedAgentLog[];
  readonly #following: Pick<EventLog, "follow" | "eventsRead">;

  /** `following`: which agents this node reads in full (see EventInterest), and what it read. */
  constructor(
    pool: pg.Pool,
    loaded: LoadedAgentLog[],
    following: Required<Pick<EventLog, "follow" | "eventsRead">>,
  ) {
    this.#pool = pool;
    this.#loaded = loaded;
    this.#following = following;
  }

  follow(agent: string | undefined): Promise<() => void> {
    return this.#following.follow?.(agent) ?? Promise.resolve(() => undefined);
  }

  eventsRead(): ReadonlyMap<string, number> {
    return this.#following.eventsRead?.() ?? new Map();
  }

  /**
   * The tails read at start, in the same snapshot as the runs and the feed's starting point (up to
   * `events.buffer_size` per agent), each cut to its last `count` events like the files' tails.
   */
  load(count: number, largeLineChars = DEFAULT_LARGE_LINE_CHARS): Promise<LoadedAgentLog[]> {
    const loaded = this.#loaded;
    this.#loaded = [];
    return Promise.resolve(
      loaded.map((log) => ({
        ...log,
        events: (count > 0 ? log.events.slice(-count) : []).map((event) => ({
          ...event,
          line: ringLine(event.line, largeLineChars),
        })),
      })),
    );
  }

  append(): void {
    // Written (with its id) before it was published.
  }

  runEnded(): void {
    // Nothing to flush: PostgreSQL made it durable at commit.
  }

  async runEvents(
    run: string,
    after: number,
    _agent?: string,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<PersistedLine[]> {
    const result = await this.#pool.query<{ id: string; line: string }>(
      // Ids come from a per-agent counter bumped in the inserting transaction: id order is commit order,
      // so `id > after` pages without a gap.
      "SELECT id, line FROM agentd_events WHERE run = $1 AND id > $2 ORDER BY id LIMIT $3",
      [run, after, Number.isFinite(limit) ? limit : null],
    );
    return result.rows.map((row) => ({ id: Number(row.id), line: row.line }));
  }

  async history(agent: string, after: number, limit: number): Promise<PersistedLine[]> {
    const result = await this.#pool.query<{ id: string; line: string }>(
      "SELECT id, line FROM agentd_events WHERE agent = $1 AND id > $2 ORDER BY id LIMIT $3",
      [agent, after, Number.isFinite(limit) ? limit : null],
    );
    return result.rows.map((row) => ({ id: Number(row.id), line: row.line }));
  }

  close(): void {
    // The pool is closed by the store.
  }
}
