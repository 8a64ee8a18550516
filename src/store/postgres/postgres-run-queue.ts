import type pg from "pg";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { Logger } from "../../logging/logger.js";
import { parseRunRecord } from "./run-record-text.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { ClaimedRun, SharedRunQueue, Withdrawal } from "../../runs/queue/shared-run-queue.js";
import { parseCheckpoint } from "./postgres-checkpoints.js";
import type { PostgresRunRecords } from "./postgres-run-records.js";
import { postIdempotentRun } from "./post-idempotent-run.js";

/** Claims are tried this often without a notification: covers one lost to a reconnect. */
const POLL_MILLISECONDS = 2_000;
/**
 * Queued runs looked at per claim beyond the slots asked for: runs of an agent at its limit are
 * passed over, and the runs behind them still get their turn.
 */
const EXTRA_CANDIDATES = 200;
/** First key of the two-key advisory locks taken per agent while its runs in flight are counted. */
const AGENT_LOCK_SPACE = 7_412_001;

export interface PostgresRunQueueOptions {
  pool: pg.Pool;
  runs: PostgresRunRecords;
  node: string;
  logger: Logger;
  /** Resolves once every change this node queued so far is committed (the writer's). */
  committed: () => Promise<void>;
}

/**
 * The cluster's run queue in `agentd_runs`: a posted run is written with no `claimed_by`; a node
 * with free slots claims the first in one transaction, in the order the database gave the rows
 * when they were inserted (`queue_position`, from a sequence: one order for every node, whatever
 * their clocks). `FOR UPDATE SKIP LOCKED` lets claimers
 * pass over the rows another claimer is taking instead of waiting on them; a transaction-scoped
 * advisory lock per agent makes the count of the agent's runs in flight (of every node) and the
 * claims that fill it one step, so two nodes never both fill the last slot of an agent. A node
 * claims only while its lease holds.
 */
export class PostgresRunQueue implements SharedRunQueue {
  readonly #options: PostgresRunQueueOptions;
  readonly #listeners = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PostgresRunQueueOptions) {
    this.#options = options;
  }

  async post(record: RunRecord): Promise<RunRecord> {
    if (record.idempotency_key === undefined) {
      await this.#options.runs.create(record, true);
      return record;
    }
    // This node's changes queued before go in first, as for any write of its own.
    await this.#options.committed();
    const posted = await postIdempotentRun(this.#options.pool, this.#options.node, record);
    if (posted.change !== undefined) this.#options.runs.written(posted.record, posted.change);
    return posted.record;
  }

  async claim(count: number, limitOf: (agentId: string) => number): Promise<ClaimedRun[]> {
    if (count <= 0) return [];
    const client = await this.#options.pool.connect();
    try {
      await client.query("BEGIN");
      // Only a node whose lease holds claims; its row stays locked until commit, so a node
      // sweeping it as dead waits, then finds these claims and takes them with the rest.
      const member = await client.query(
        "SELECT 1 FROM agentd_nodes WHERE id = $1 AND lease_until > now() FOR KEY SHARE",
        [this.#options.node],
      );
      if (member.rowCount === 0) {
        await client.query("COMMIT");
        return [];
      }
      const candidates = await client.query<{ id: string; agent: string; record: unknown }>(
        `SELECT id, agent, record FROM agentd_runs WHERE status = 'queued' AND claimed_by IS NULL
         ORDER BY queue_position, created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [count + EXTRA_CANDIDATES],
      );
      const room = await this.#roomByAgent(client, candidates.rows, limitOf);
      const claimed: RunRecord[] = [];
      for (const row of candidates.rows) {
        if (claimed.length >= count) break;
        const left = room.get(row.agent) ?? 0;
        const record = parseRunRecord(row.record);
        if (left <= 0 || record === undefined) continue;
        room.set(row.agent, left - 1);
        claimed.push(record);
      }
      if (claimed.length === 0) {
        await client.query("COMMIT");
        return [];
      }
      const ids = claimed.map((record) => record.id);
      await client.query("UPDATE agentd_runs SET claimed_by = $1 WHERE id = ANY($2::text[])", [
        this.#options.node,
        ids,
      ]);
      // A run put back to continue from its checkpoint has one; a new run has none.
      const checkpoints = await client.query<{ run: string; checkpoint: string }>(
        "SELECT run, checkpoint FROM agentd_checkpoints WHERE run = ANY($1::text[])",
        [ids],
      );
      await client.query("COMMIT");
      const resumeFrom = new Map(checkpoints.rows.map((row) => [row.run, parseCheckpoint(row.checkpoint)]));
      return claimed.map((record) => {
        const checkpoint = resumeFrom.get(record.id);
        return checkpoint === undefined ? { record } : { record, resumeFrom: checkpoint };
      });
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Free slots per agent of the candidates, each counted under the agent's advisory lock (taken
   * in name order, so two claimers never wait on each other crosswise), held until commit.
   */
  async #roomByAgent(
    client: pg.PoolClient,
    candidates: Array<{ agent: string }>,
    limitOf: (agentId: string) => number,
  ): Promise<Map<string, number>> {
    const agents = [...new Set(candidates.map((row) => row.agent))].sort();
    const room = new Map<string, number>();
    for (const agent of agents) {
      const limit = limitOf(agent);
      if (limit <= 0) continue;
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [AGENT_LOCK_SPACE, agent]);
      const inFlight = await client.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM agentd_runs WHERE agent = $1
         AND status IN ('queued', 'running', 'paused', 'waiting') AND claimed_by IS NOT NULL`,
        [agent],
      );
      room.set(agent, limit - (inFlight.rows[0]?.count ?? 0));
    }
    return room;
  }

  /**
   * One conditional update: the row goes back to `queued` with no owner only while it still holds
   * the ended record this node saw (same status and end time) and a checkpoint exists, so two nodes
   * resuming the same run (a start and a lease takeover, two POSTs) put it back once. This node's
   * own changes queued before go in first (the `crashed` record of a takeover, for one).
   */
  async requeue(queued: RunRecord, ended: RunRecord): Promise<Checkpoint | undefined> {
    await this.#options.committed();
    const client = await this.#options.pool.connect();
    try {
      await client.query("BEGIN");
      // The row is locked before the change number is taken (as every writer does): a write of
      // the run by another node that committed meanwhile got a lower number, so no node keeps
      // that write over this one.
      await client.query("SELECT 1 FROM agentd_runs WHERE id = $1 FOR UPDATE", [ended.id]);
      const result = await client.query<{ checkpoint: string; change: string }>(
        `UPDATE agentd_runs AS r SET status = 'queued', claimed_by = NULL, node = $2, record = $3, ended_at = $6,
           change = nextval('agentd_changes')
         FROM agentd_checkpoints AS c
         WHERE r.id = $1 AND c.run = r.id AND r.status = $4 AND r.ended_at IS NOT DISTINCT FROM $5
         RETURNING c.checkpoint, r.change::text AS change`,
        [
          ended.id,
          this.#options.node,
          JSON.stringify(queued),
          ended.status,
          ended.ended_at ?? null,
          queued.ended_at ?? null,
        ],
      );
      const checkpoint = parseCheckpoint(result.rows[0]?.checkpoint);
      const change = result.rows[0]?.change;
      if (checkpoint === undefined || change === undefined) {
        await client.query("ROLLBACK");
        return undefined;
      }
      await client.query("SELECT pg_notify('agentd_changes', $1)", [change]);
      await client.query("SELECT pg_notify('agentd_queue', '')");
      await client.query("COMMIT");
      this.#options.runs.written(queued, change);
      return checkpoint;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async release(runs: string[]): Promise<void> {
    await this.#options.pool.query(
      `UPDATE agentd_runs SET claimed_by = NULL WHERE id = ANY($1::text[]) AND claimed_by = $2 AND status = 'queued'`,
      [runs, this.#options.node],
    );
    await this.#options.pool.query("SELECT pg_notify('agentd_queue', '')");
  }

  async withdraw(run: string): Promise<Withdrawal> {
    const taken = await this.#options.pool.query(
      `UPDATE agentd_runs SET claimed_by = $2
       WHERE id = $1 AND status = 'queued' AND claimed_by IS NULL RETURNING id`,
      [run, this.#options.node],
    );
    if (taken.rowCount === 1) return { withdrawn: true };
    const owner = await this.#options.pool.query<{ claimed_by: string | null }>(
      "SELECT claimed_by FROM agentd_runs WHERE id = $1",
      [run],
    );
    return { withdrawn: false, node: owner.rows[0]?.claimed_by ?? undefined };
  }

  onWork(listener: () => void): () => void {
    this.#listeners.add(listener);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.wake(), POLL_MILLISECONDS);
      this.#timer.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.close();
    };
  }

  /** A notification on `agentd_queue` (or the slow beat): the listeners try to claim. */
  wake(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.#options.logger.warn({ err: error }, "a run queue listener failed");
      }
    }
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
