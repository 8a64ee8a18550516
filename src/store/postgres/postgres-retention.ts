import type pg from "pg";
import type { Logger } from "../../logging/logger.js";
import type { RetentionPolicy } from "../../config/retention-policy.js";
import { type Clock, systemClock } from "../../clock/clock.js";
import { AGENTS_WITH_RUNS_SQL, UNFINISHED_STATUSES_SQL } from "./run-history-queries.js";

/** Held (session advisory lock) by the one node of a cluster pruning right now; the others skip. */
const PRUNE_LOCK = 7_412_000_003;
const DAY_MILLISECONDS = 86_400_000;
/** A schedule fire's claim row is needed while nodes may race for that fire: a week is ample. */
const FIRE_CLAIMS_KEPT_MILLISECONDS = 7 * DAY_MILLISECONDS;

export interface PostgresRetentionOptions {
  pool: pg.Pool;
  logger: Logger;
  /** The policy of one agent (config `retention:`, overridden by its agent file). */
  policyOf: (agentId: string) => RetentionPolicy;
  /** What time it is and the timer between passes (default: the wall clock). */
  clock?: Clock;
  /** Between the end of one pass and the next (default 15 minutes). */
  intervalMilliseconds?: number;
  /** Runs deleted per transaction, with their events and checkpoints (default 200). */
  batchSize?: number;
  /** Runs just deleted (committed): the node lets go of them. */
  onPruned?: (runs: string[]) => void;
}

/** What one pass deleted, or that another node was pruning. */
export interface PruneReport {
  runs: number;
  events: number;
  checkpoints: number;
  fireClaims: number;
  /** True when another node held the prune lock: this pass did nothing. */
  skipped: boolean;
}

/**
 * Prunes history from PostgreSQL (issue 26 item 6): finished runs created more than `days` ago or
 * beyond the newest `runsPerAgent` of their agent, with their events and checkpoints; an agent's
 * events outside any run that are older than its oldest run kept; schedule fire claims older than
 * a week. Unfinished runs are never touched. One pass at start and one every interval; in a
 * cluster one node prunes at a time (a session advisory lock tried, never waited for). Each batch
 * is its own short transaction, so no lock is held long and a stop loses at most one batch's work.
 * Event ids are never reused (the counters stay): a poller whose cursor falls in a pruned range
 * is told the range was missed and goes on from the oldest event kept.
 */
export class PostgresRetention {
  readonly #options: PostgresRetentionOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #cancelTimer: () => void = () => undefined;
  #pass: Promise<PruneReport> | undefined;
  #closed = false;

  constructor(options: PostgresRetentionOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger.child({ module: "retention" });
  }

  /** A first pass now (not waited for: the start does not pay for it), then one every interval. */
  start(): void {
    void this.#passAndRearm();
  }

  /** One pass, or the one already under way. Never rejects: a failed pass is logged and retried next time. */
  prune(): Promise<PruneReport> {
    this.#pass ??= this.#prunePass()
      .catch((error: unknown) => {
        this.#logger.warn({ err: error }, "pruning the history failed: it is tried again at the next pass");
        return emptyReport(false);
      })
      .finally(() => {
        this.#pass = undefined;
      });
    return this.#pass;
  }

  /** No further pass; a pass under way stops after its current batch. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#cancelTimer();
    await this.#pass;
  }

  async #passAndRearm(): Promise<void> {
    await this.prune();
    if (this.#closed) return;
    this.#cancelTimer = this.#clock.setTimer(
      () => void this.#passAndRearm(),
      this.#options.intervalMilliseconds ?? 15 * 60_000,
    );
  }

  async #prunePass(): Promise<PruneReport> {
    const client = await this.#options.pool.connect();
    try {
      const lock = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
        PRUNE_LOCK,
      ]);
      if (lock.rows[0]?.locked !== true) return emptyReport(true);
      try {
        const report = emptyReport(false);
        const agents = await client.query<{ agent: string }>(AGENTS_WITH_RUNS_SQL);
        for (const { agent } of agents.rows) {
          if (this.#closed) break;
          await this.#pruneAgent(client, agent, report);
        }
        if (!this.#closed) report.fireClaims = await this.#pruneFireClaims(client);
        if (report.runs > 0 || report.fireClaims > 0) this.#logger.info(report, "pruned history");
        return report;
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [PRUNE_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  async #pruneAgent(client: pg.PoolClient, agent: string, report: PruneReport): Promise<void> {
    const policy = this.#options.policyOf(agent);
    if (policy.days === null && policy.runsPerAgent === null) return;
    const olderThan =
      policy.days === null
        ? null
        : new Date(this.#clock.now() - policy.days * DAY_MILLISECONDS).toISOString();
    // The newest run past the `runsPerAgent` kept: it and every run older go.
    const beyond =
      policy.runsPerAgent === null
        ? undefined
        : (
            await client.query<{ created_at: string; id: string }>(
              `SELECT created_at, id FROM agentd_runs WHERE agent = $1
               ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
              [agent, policy.runsPerAgent],
            )
          ).rows[0];
    if (olderThan === null && beyond === undefined) return;
    const batchSize = this.#options.batchSize ?? 200;
    let pruned = 0;
    for (;;) {
      if (this.#closed) break;
      let ids: string[];
      await client.query("BEGIN");
      try {
        // SKIP LOCKED: a run some node writes right now waits for the next pass.
        const runs = await client.query<{ id: string }>(
          `DELETE FROM agentd_runs WHERE id IN (
             SELECT id FROM agentd_runs
             WHERE agent = $1 AND status NOT IN ${UNFINISHED_STATUSES_SQL}
               AND (created_at < $2::text OR ($3::text IS NOT NULL AND (created_at, id) <= ($3::text, $4::text)))
             ORDER BY created_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
           RETURNING id`,
          [agent, olderThan, beyond?.created_at ?? null, beyond?.id ?? null, batchSize],
        );
        ids = runs.rows.map((row) => row.id);
        if (ids.length > 0) {
          const events = await client.query("DELETE FROM agentd_events WHERE run = ANY($1::text[])", [ids]);
          const checkpoints = await client.query(
            "DELETE FROM agentd_checkpoints WHERE run = ANY($1::text[])",
            [ids],
          );
          report.events += events.rowCount ?? 0;
          report.checkpoints += checkpoints.rowCount ?? 0;
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
      report.runs += ids.length;
      pruned += ids.length;
      if (ids.length > 0) this.#options.onPruned?.(ids);
      if (ids.length < batchSize) break;
    }
    if (pruned > 0) report.events += await this.#pruneEventsOutsideRuns(client, agent, batchSize * 10);
  }

  /** The agent's events of no run older than the first event of the oldest run it kept, if any. */
  async #pruneEventsOutsideRuns(client: pg.PoolClient, agent: string, batchSize: number): Promise<number> {
    const first = await client.query<{ id: string | null }>(
      "SELECT min(id)::text AS id FROM agentd_events WHERE agent = $1 AND run IS NOT NULL",
      [agent],
    );
    const below = first.rows[0]?.id ?? null;
    if (below === null) return 0;
    let deleted = 0;
    for (;;) {
      if (this.#closed) break;
      const result = await client.query(
        `DELETE FROM agentd_events WHERE agent = $1 AND id IN (
           SELECT id FROM agentd_events WHERE agent = $1 AND run IS NULL AND id < $2 ORDER BY id LIMIT $3)`,
        [agent, below, batchSize],
      );
      deleted += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < batchSize) return deleted;
    }
    return deleted;
  }

  async #pruneFireClaims(client: pg.PoolClient): Promise<number> {
    const before = new Date(this.#clock.now() - FIRE_CLAIMS_KEPT_MILLISECONDS).toISOString();
    let deleted = 0;
    for (;;) {
      if (this.#closed) break;
      const result = await client.query(
        `DELETE FROM agentd_schedule_fires WHERE (agent, scheduled_for) IN (
           SELECT agent, scheduled_for FROM agentd_schedule_fires WHERE claimed_at < $1::timestamptz LIMIT 1000)`,
        [before],
      );
      deleted += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < 1000) return deleted;
    }
    return deleted;
  }
}

function emptyReport(skipped: boolean): PruneReport {
  return { runs: 0, events: 0, checkpoints: 0, fireClaims: 0, skipped };
}
