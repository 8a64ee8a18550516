import pg from "pg";
import type { AgentEvent } from "../../events/agent-event.js";
import type { Logger } from "../../logging/logger.js";
import { parseRunRecord } from "./run-record-text.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";
import { CooldownRowSchema } from "./postgres-cli-cooldowns.js";
import type { EventInterest } from "./event-interest.js";

/** Reads again this often even without a notification: covers a notification lost to a reconnect. */
const SWEEP_MILLISECONDS = 1_000;
const LONGEST_RECONNECT_MILLISECONDS = 5_000;
/** config `events.buffer_size`'s default. */
const DEFAULT_BUFFER_SIZE = 200;

export interface ChangeFeedOptions {
  url: string;
  pool: pg.Pool;
  node: string;
  logger: Logger;
  /** The snapshot the start-up state was loaded from (`pg_current_snapshot()` as text). */
  snapshot: string;
  /** Each agent's last event id already loaded (the start-up snapshot's). */
  eventCursors: Map<string, number>;
  /** A run record written by another node. */
  onRun: (record: RunRecord, node: string, change: string) => void;
  /**
   * A committed event (of any node) of an agent this node follows: each agent's in id order,
   * gap-free while it is followed; when it is followed again after a pause, from its last
   * `bufferSize` events on.
   */
  onEvent: (event: AgentEvent) => void;
  /**
   * Which agents this node follows in full; of the others only the notable events are read
   * (`onNotable`). Default: every agent in full.
   */
  interest?: EventInterest;
  /** Events an agent followed again starts from (config `events.buffer_size`; default 200). */
  bufferSize?: number;
  /** A notable event (approval, question, a run's end) of an agent this node does not follow, in id order. */
  onNotable?: (event: AgentEvent) => void;
  /** Rows of `agentd_events` this read fetched, per agent. */
  onEventsRead?: (agent: string, count: number) => void;
  /** A CLI cooldown started by another node. */
  onCooldown: (cooldown: CliCooldown) => void;
  /** An action or an answer another node wrote for a run of this node (its JSON), in order. */
  onControl: (payload: string) => void;
  /** A notification on `agentd_queue`: a run was queued for the cluster, or one ended. */
  onQueue: () => void;
  /** The notification connection was lost (with the error) or is back (undefined). */
  onConnection: (error: Error | undefined) => void;
}

/** The rows of runs, cooldowns and control messages committed since `snapshot` was taken. */
const SINCE_SNAPSHOT =
  "xid >= pg_snapshot_xmin($1::pg_snapshot) AND NOT pg_visible_in_snapshot(xid, $1::pg_snapshot)";

/**
 * Follows what other nodes commit, with no cluster-wide lock behind it. Runs, CLI cooldowns and
 * the actions and answers for this node's runs are rows stamped with the transaction that wrote
 * them: each read (on a notification on `agentd_changes`, or each second) takes a snapshot and
 * reads the rows of transactions the previous read's snapshot did not see, so a transaction that
 * commits late is read late, never skipped. Events are followed per agent by id (`agentd_events`
 * notifications carry the agent): an agent's ids are handed out under its counter row's lock, so
 * they commit in order, and reading `id > cursor` never leaves a gap behind. The periodic read
 * compares every agent's counter with its cursor, for a notification lost to a reconnect.
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  #snapshot: string;
  readonly #cursors: Map<string, number>;
  /** Agents notified (or written by this node) since the last read. */
  readonly #agentsToRead = new Set<string>();
  #sweepCounters = true;
  #listener: pg.Client | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #reconnectDelay = 100;
  /** The last id of each agent not followed whose notable events were read up to it. */
  readonly #notableCursors = new Map<string, number>();
  /** The stretch of following (EventInterest.period) of each agent's last read in full. */
  readonly #periods = new Map<string, string>();
  /** Reads asked for (`readNow`) and reads done: a read done covers every one asked before it began. */
  #asked = 0;
  #done = 0;
  readonly #waiting = new Set<{ generation: number; resolve: () => void }>();

  constructor(options: ChangeFeedOptions) {
    this.#options = options;
    this.#snapshot = options.snapshot;
    this.#cursors = new Map(options.eventCursors);
  }

  async start(): Promise<void> {
    await this.#listen();
    this.#timer = setInterval(() => this.sweep(), SWEEP_MILLISECONDS);
    this.#timer.unref();
    this.read();
  }

  /** Reads again, comparing every agent's event counter with its cursor. */
  sweep(): void {
    this.#sweepCounters = true;
    this.read();
  }

  /**
   * `read` (every agent behind its counter when `agents` is undefined), resolving once a read that
   * began after this call ended (with or without success: a failed read is tried again by the
   * next sweep).
   */
  readNow(agents?: Iterable<string>): Promise<void> {
    if (agents === undefined) this.#sweepCounters = true;
    this.#asked += 1;
    const generation = this.#asked;
    const done = new Promise<void>((resolve) => this.#waiting.add({ generation, resolve }));
    this.read(agents ?? []);
    if (this.#closed) this.#settleWaiting(Number.POSITIVE_INFINITY);
    return done;
  }

  /** Reads what was committed since the last read, and the events of `agents` (coalesced). */
  read(agents: Iterable<string> = []): void {
    for (const agent of agents) this.#agentsToRead.add(agent);
    if (this.#closed) return;
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    const generation = this.#asked;
    this.#reading = this.#readOnce()
      .then(() => undefined)
      .catch((error: unknown) => {
        // The agents it was to read are read by the next sweep.
        this.#sweepCounters = true;
        this.#options.logger.debug({ err: error }, "change feed read failed; retrying");
      })
      .finally(() => {
        this.#reading = undefined;
        this.#settleWaiting(generation);
        if (this.#readAgain) {
          this.#readAgain = false;
          this.read();
        }
      });
  }

  #settleWaiting(generation: number): void {
    this.#done = Math.max(this.#done, generation);
    for (const waiter of this.#waiting)
      if (waiter.generation <= this.#done) {
        this.#waiting.delete(waiter);
        waiter.resolve();
      }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#reading;
    this.#settleWaiting(Number.POSITIVE_INFINITY);
    await this.#listener?.end().catch(() => undefined);
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#options.url });
    client.on("notification", (message) => {
      if (message.channel === "agentd_queue") this.#options.onQueue();
      else if (message.channel === "agentd_events")
        this.read(message.payload === undefined ? [] : [message.payload]);
      else this.read();
    });
    client.on("error", (error) => {
      this.#options.logger.warn({ err: error }, "lost the PostgreSQL notification connection; reconnecting");
      this.#options.onConnection(error);
      void client.end().catch(() => undefined);
      this.#reconnect();
    });
    await client.connect();
    await client.query("LISTEN agentd_changes");
    await client.query("LISTEN agentd_queue");
    await client.query("LISTEN agentd_events");
    this.#listener = client;
    this.#reconnectDelay = 100;
    this.#options.onConnection(undefined);
  }

  #reconnect(): void {
    if (this.#closed) return;
    const delay = this.#reconnectDelay;
    this.#reconnectDelay = Math.min(delay * 2, LONGEST_RECONNECT_MILLISECONDS);
    setTimeout(() => {
      this.#listen()
        .then(() => this.sweep())
        .catch(() => this.#reconnect());
    }, delay).unref();
  }

  async #readOnce(): Promise<void> {
    const sweep = this.#sweepCounters;
    this.#sweepCounters = false;
    const agents = new Set(this.#agentsToRead);
    this.#agentsToRead.clear();
    const client = await this.#options.pool.connect();
    let snapshot: string;
    let runs: Array<{ record: unknown; node: string; change: string }>;
    let events: Array<{ agent: string; id: string; line: string }>;
    let notable: Array<{ agent: string; id: string; line: string }> = [];
    let notableUpTo: Array<{ agent: string; last_id: string }> = [];
    const periods = new Map<string, string>();
    let cooldowns: Array<Record<string, unknown> & { node: string; change: string }>;
    let controls: Array<{ id: string; message: string }>;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      snapshot =
        (await client.query<{ snapshot: string }>("SELECT pg_current_snapshot()::text AS snapshot")).rows[0]
          ?.snapshot ?? this.#snapshot;
      const since = [this.#snapshot];
      runs = (
        await client.query<{ record: unknown; node: string; change: string }>(
          `SELECT record, node, change FROM agentd_runs WHERE ${SINCE_SNAPSHOT} ORDER BY change`,
          since,
        )
      ).rows;
      if (sweep) {
        const counters = await client.query<{ agent: string; last_id: string }>(
          "SELECT agent, last_id FROM agentd_event_counters",
        );
        for (const row of counters.rows)
          if (Number(row.last_id) > this.#readUpTo(row.agent)) agents.add(row.agent);
      }
      const wanted: string[] = [];
      const others: string[] = [];
      for (const agent of agents) {
        const period = this.#options.interest === undefined ? "" : this.#options.interest.period(agent);
        if (period === undefined) others.push(agent);
        else {
          wanted.push(agent);
          periods.set(agent, period);
        }
      }
      // An agent followed again after a pause starts from its last `bufferSize` events: what a
      // node following it all along holds in memory.
      events =
        wanted.length === 0
          ? []
          : (
              await client.query<{ agent: string; id: string; line: string }>(
                `SELECT e.agent, e.id, e.line FROM unnest($1::text[], $2::bigint[], $3::boolean[]) AS c(agent, after, again)
                 CROSS JOIN LATERAL (
                   SELECT agent, id, line, change, position FROM agentd_events AS e
                   WHERE e.agent = c.agent AND e.id > GREATEST(c.after, CASE WHEN c.again THEN
                     COALESCE((SELECT last_id FROM agentd_event_counters AS k WHERE k.agent = c.agent), 0) - $4
                     ELSE 0 END)
                   ORDER BY e.id
                 ) AS e
                 ORDER BY e.change, e.position`,
                [
                  wanted,
                  wanted.map((agent) => this.#cursors.get(agent) ?? 0),
                  wanted.map((agent) => this.#periods.get(agent) !== periods.get(agent)),
                  this.#options.bufferSize ?? DEFAULT_BUFFER_SIZE,
                ],
              )
            ).rows;
      if (others.length > 0) {
        // Up to each counter as this snapshot sees it: an agent's ids commit in order, so every
        // event up to it is visible here, and the next read starts after it.
        notableUpTo = (
          await client.query<{ agent: string; last_id: string }>(
            "SELECT agent, last_id FROM agentd_event_counters WHERE agent = ANY($1::text[])",
            [others],
          )
        ).rows;
        notable = (
          await client.query<{ agent: string; id: string; line: string }>(
            `SELECT e.agent, e.id, e.line FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS c(agent, after, up_to)
             CROSS JOIN LATERAL (
               SELECT agent, id, line FROM agentd_events AS e
               WHERE e.agent = c.agent AND e.notable AND e.id > c.after AND e.id <= c.up_to ORDER BY e.id
             ) AS e
             ORDER BY e.agent, e.id`,
            [
              notableUpTo.map((row) => row.agent),
              notableUpTo.map((row) => this.#readUpTo(row.agent)),
              notableUpTo.map((row) => row.last_id),
            ],
          )
        ).rows;
      }
      cooldowns = (
        await client.query<Record<string, unknown> & { node: string; change: string }>(
          `SELECT tool, until, kind, message, node, change FROM agentd_cli_cooldowns WHERE ${SINCE_SNAPSHOT} ORDER BY change`,
          since,
        )
      ).rows;
      controls = (
        await client.query<{ id: string; message: string }>(
          `SELECT id, message FROM agentd_control_messages WHERE node = $2 AND ${SINCE_SNAPSHOT} ORDER BY change, id`,
          [this.#snapshot, this.#options.node],
        )
      ).rows;
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    // Records first: a status event never arrives before the record it reports.
    for (const row of runs) {
      if (row.node === this.#options.node) continue;
      const record = parseRunRecord(row.record);
      if (record !== undefined) this.#options.onRun(record, row.node, row.change);
    }
    const read = new Map<string, number>();
    for (const row of events) {
      read.set(row.agent, (read.get(row.agent) ?? 0) + 1);
      const id = Number(row.id);
      if (id <= (this.#cursors.get(row.agent) ?? 0)) continue;
      this.#cursors.set(row.agent, id);
      this.#options.onEvent(JSON.parse(row.line) as AgentEvent);
    }
    for (const [agent, period] of periods) this.#periods.set(agent, period);
    for (const row of notable) {
      read.set(row.agent, (read.get(row.agent) ?? 0) + 1);
      if (Number(row.id) <= this.#readUpTo(row.agent)) continue;
      this.#notableCursors.set(row.agent, Number(row.id));
      this.#options.onNotable?.(JSON.parse(row.line) as AgentEvent);
    }
    for (const row of notableUpTo) {
      this.#periods.delete(row.agent);
      if (Number(row.last_id) > this.#readUpTo(row.agent))
        this.#notableCursors.set(row.agent, Number(row.last_id));
    }
    for (const [agent, count] of read) this.#options.onEventsRead?.(agent, count);
    for (const row of cooldowns) {
      if (row.node === this.#options.node) continue;
      const parsed = CooldownRowSchema.safeParse(row);
      if (parsed.success) this.#options.onCooldown(parsed.data);
    }
    // Last: an answer may refer to an approval or a question whose event came in this same read.
    for (const row of controls) this.#options.onControl(row.message);
    this.#snapshot = snapshot;
    if (controls.length > 0) this.#forget(controls.map((row) => row.id));
  }

  /** The agent's last id this node read, in full or its notable events only. */
  #readUpTo(agent: string): number {
    return Math.max(this.#cursors.get(agent) ?? 0, this.#notableCursors.get(agent) ?? 0);
  }

  /** Deletes the messages for this node that were handed over. */
  #forget(ids: string[]): void {
    this.#options.pool
      .query("DELETE FROM agentd_control_messages WHERE id = ANY($1::bigint[])", [ids])
      .catch((error: unknown) =>
        this.#options.logger.debug({ err: error }, "could not delete the control messages read"),
      );
  }
}
