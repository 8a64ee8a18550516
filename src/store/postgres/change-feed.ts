import pg from "pg";
import type { AgentEvent } from "../../events/agent-event.js";
import type { Logger } from "../../logging/logger.js";
import { parseRunRecord } from "./run-record-text.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { CliCooldown } from "../../workers/cli/cli-cooldown-records.js";
import { CooldownRowSchema } from "./postgres-cli-cooldowns.js";

/** Reads again this often even without a notification: covers a notification lost to a reconnect. */
const SWEEP_MILLISECONDS = 1_000;
const LONGEST_RECONNECT_MILLISECONDS = 5_000;

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
  /** A committed event (of any node): each agent's in id order, gap-free. */
  onEvent: (event: AgentEvent) => void;
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

  /** Reads what was committed since the last read, and the events of `agents` (coalesced). */
  read(agents: Iterable<string> = []): void {
    for (const agent of agents) this.#agentsToRead.add(agent);
    if (this.#closed) return;
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = this.#readOnce()
      .catch((error: unknown) => {
        // The agents it was to read are read by the next sweep.
        this.#sweepCounters = true;
        this.#options.logger.debug({ err: error }, "change feed read failed; retrying");
      })
      .finally(() => {
        this.#reading = undefined;
        if (this.#readAgain) {
          this.#readAgain = false;
          this.read();
        }
      });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#reading;
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
          if (Number(row.last_id) > (this.#cursors.get(row.agent) ?? 0)) agents.add(row.agent);
      }
      const wanted = [...agents];
      events =
        wanted.length === 0
          ? []
          : (
              await client.query<{ agent: string; id: string; line: string }>(
                `SELECT e.agent, e.id, e.line FROM unnest($1::text[], $2::bigint[]) AS c(agent, after)
                 CROSS JOIN LATERAL (
                   SELECT agent, id, line, change, position FROM agentd_events AS e
                   WHERE e.agent = c.agent AND e.id > c.after ORDER BY e.id
                 ) AS e
                 ORDER BY e.change, e.position`,
                [wanted, wanted.map((agent) => this.#cursors.get(agent) ?? 0)],
              )
            ).rows;
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
    for (const row of events) {
      const id = Number(row.id);
      if (id <= (this.#cursors.get(row.agent) ?? 0)) continue;
      this.#cursors.set(row.agent, id);
      this.#options.onEvent(JSON.parse(row.line) as AgentEvent);
    }
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

  /** Deletes the messages for this node that were handed over. */
  #forget(ids: string[]): void {
    this.#options.pool
      .query("DELETE FROM agentd_control_messages WHERE id = ANY($1::bigint[])", [ids])
      .catch((error: unknown) =>
        this.#options.logger.debug({ err: error }, "could not delete the control messages read"),
      );
  }
}
