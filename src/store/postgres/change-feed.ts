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
  /** The last change already loaded (the start-up snapshot's). */
  after: string;
  /** A run record written by another node. */
  onRun: (record: RunRecord, node: string, change: string) => void;
  /** A committed event (of any node), in commit order. */
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

/**
 * Follows what every node commits: LISTEN on `agentd_changes`, and on each notification (or each
 * second) reads the runs, events and CLI cooldowns with a change number above the last one seen,
 * and the actions and answers other nodes wrote for this node's runs, in one snapshot.
 * Writers commit in change order (an advisory lock), so nothing below the watermark can appear later.
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  #after: string;
  #listener: pg.Client | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #reconnectDelay = 100;

  constructor(options: ChangeFeedOptions) {
    this.#options = options;
    this.#after = options.after;
  }

  async start(): Promise<void> {
    await this.#listen();
    this.#timer = setInterval(() => this.read(), SWEEP_MILLISECONDS);
    this.#timer.unref();
    this.read();
  }

  /** Reads what was committed since the last read (coalesced: one read at a time). */
  read(): void {
    if (this.#closed) return;
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = this.#readOnce()
      .catch((error: unknown) =>
        this.#options.logger.debug({ err: error }, "change feed read failed; retrying"),
      )
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
        .then(() => this.read())
        .catch(() => this.#reconnect());
    }, delay).unref();
  }

  async #readOnce(): Promise<void> {
    const client = await this.#options.pool.connect();
    let runs: Array<{ record: unknown; node: string; change: string }>;
    let events: Array<{ line: string; change: string }>;
    let cooldowns: Array<Record<string, unknown> & { node: string; change: string }>;
    let controls: Array<{ message: string; change: string }>;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      runs = (
        await client.query<{ record: unknown; node: string; change: string }>(
          "SELECT record, node, change FROM agentd_runs WHERE change > $1 ORDER BY change",
          [this.#after],
        )
      ).rows;
      events = (
        await client.query<{ line: string; change: string }>(
          "SELECT line, change FROM agentd_events WHERE change > $1 ORDER BY change, position",
          [this.#after],
        )
      ).rows;
      cooldowns = (
        await client.query<Record<string, unknown> & { node: string; change: string }>(
          "SELECT tool, until, kind, message, node, change FROM agentd_cli_cooldowns WHERE change > $1 ORDER BY change",
          [this.#after],
        )
      ).rows;
      controls = (
        await client.query<{ message: string; change: string }>(
          "SELECT message, change FROM agentd_control_messages WHERE node = $2 AND change > $1 ORDER BY change, id",
          [this.#after, this.#options.node],
        )
      ).rows;
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    let newest = BigInt(this.#after);
    // Records first: a status event never arrives before the record it reports.
    for (const row of runs) {
      if (BigInt(row.change) > newest) newest = BigInt(row.change);
      if (row.node === this.#options.node) continue;
      const record = parseRunRecord(row.record);
      if (record !== undefined) this.#options.onRun(record, row.node, row.change);
    }
    for (const row of events) {
      if (BigInt(row.change) > newest) newest = BigInt(row.change);
      this.#options.onEvent(JSON.parse(row.line) as AgentEvent);
    }
    for (const row of cooldowns) {
      if (BigInt(row.change) > newest) newest = BigInt(row.change);
      if (row.node === this.#options.node) continue;
      const parsed = CooldownRowSchema.safeParse(row);
      if (parsed.success) this.#options.onCooldown(parsed.data);
    }
    // Last: an answer may refer to an approval or a question whose event came in this same read.
    for (const row of controls) {
      if (BigInt(row.change) > newest) newest = BigInt(row.change);
      this.#options.onControl(row.message);
    }
    this.#after = newest.toString();
    if (controls.length > 0) this.#forget(this.#after);
  }

  /** Deletes the messages for this node up to `change`: they were handed over. */
  #forget(change: string): void {
    this.#options.pool
      .query("DELETE FROM agentd_control_messages WHERE node = $1 AND change <= $2", [
        this.#options.node,
        change,
      ])
      .catch((error: unknown) =>
        this.#options.logger.debug({ err: error }, "could not delete the control messages read"),
      );
  }
}
