import { randomUUID } from "node:crypto";
import os from "node:os";
import type pg from "pg";
import { type Clock, systemClock } from "../../clock/clock.js";
import type { Logger } from "../../logging/logger.js";
import { parseRunRecord } from "./run-record-text.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

/** One daemon of the cluster, as the `agentd_nodes` table lists it. */
export interface NodeInfo {
  id: string;
  name: string;
  url: string | null;
  started_at: string;
  lease_until: string;
}

export interface ClusterNodeOptions {
  pool: pg.Pool;
  logger: Logger;
  /** config `store.lease`: a node silent this long is dead. */
  leaseMilliseconds: number;
  /**
   * When to renew and sweep (default: the system clock). The lease itself is reckoned in the
   * database's time, the one clock every node shares: a node whose own clock is ahead must not take
   * the others for dead.
   */
  clock?: Clock;
  /** The unfinished runs of a node found dead, handed over once (to one node only). */
  onDeadNodeRuns: (node: string, runs: RunRecord[]) => void;
  /**
   * This node found its own row gone: it was taken for dead and its runs were taken over or put
   * back in the queue. Called before it joins again, so it stops them before it claims new ones.
   */
  onLeaseLost: () => void;
}

/**
 * This daemon's membership: a row in `agentd_nodes` whose lease it renews three times per lease
 * (each renewal on the clock, the lease's end in the database's time);
 * and the watch on the others: the node that deletes an expired row (only one can) gets that
 * node's unfinished runs to end or resume.
 */
export class ClusterNode {
  readonly id: string;
  readonly name = os.hostname();
  readonly #options: ClusterNodeOptions;
  readonly #clock: Clock;
  /** Cancels the next renewal; undefined once the node left. */
  #cancelRenewal: (() => void) | undefined;
  #renewing = false;
  #url: string | null = null;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.id = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  async join(): Promise<void> {
    await this.#options.pool.query(
      `INSERT INTO agentd_nodes (id, name, lease_until) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
      [this.id, this.name, this.#options.leaseMilliseconds],
    );
    this.#armRenewal();
  }

  /** Renews every third of the lease, counted from each renewal's start (one at a time: #tick). */
  #armRenewal(): void {
    const every = Math.max(50, Math.floor(this.#options.leaseMilliseconds / 3));
    this.#cancelRenewal = this.#clock.setTimer(() => {
      this.#armRenewal();
      void this.#tick();
    }, every);
  }

  /** The URL other nodes and operators see for this node. */
  async announce(url: string): Promise<void> {
    this.#url = url;
    await this.#options.pool.query("UPDATE agentd_nodes SET url = $2 WHERE id = $1", [this.id, url]);
  }

  async nodes(): Promise<NodeInfo[]> {
    const result = await this.#options.pool.query<{
      id: string;
      name: string;
      url: string | null;
      started_at: Date;
      lease_until: Date;
    }>("SELECT id, name, url, started_at, lease_until FROM agentd_nodes ORDER BY started_at");
    return result.rows.map((row) => ({
      ...row,
      started_at: row.started_at.toISOString(),
      lease_until: row.lease_until.toISOString(),
    }));
  }

  /** Leaves the cluster: the row goes, so nobody takes this node for dead. */
  async leave(): Promise<void> {
    this.#cancelRenewal?.();
    this.#cancelRenewal = undefined;
    await this.#options.pool
      .query("DELETE FROM agentd_nodes WHERE id = $1", [this.id])
      .catch(() => undefined);
    await this.#options.pool
      .query("DELETE FROM agentd_control_messages WHERE node = $1", [this.id])
      .catch(() => undefined);
  }

  async #tick(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      const renewed = await this.#options.pool.query(
        "UPDATE agentd_nodes SET lease_until = now() + $2 * interval '1 millisecond' WHERE id = $1",
        [this.id, this.#options.leaseMilliseconds],
      );
      // Left meanwhile: the row is gone because this node deleted it.
      if (renewed.rowCount === 0 && this.#cancelRenewal === undefined) return;
      if (renewed.rowCount === 0) {
        this.#options.logger.error(
          { node: this.id },
          "this node's lease had expired: the cluster took it for dead and took its runs; stopping them here and joining again",
        );
        this.#options.onLeaseLost();
        await this.#options.pool.query(
          `INSERT INTO agentd_nodes (id, name, url, lease_until) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')`,
          [this.id, this.name, this.#url, this.#options.leaseMilliseconds],
        );
      }
      await this.#sweep();
    } catch (error) {
      this.#options.logger.debug({ err: error }, "cannot renew the lease or sweep: PostgreSQL unreachable");
    } finally {
      this.#renewing = false;
    }
  }

  /**
   * One transaction: the expired rows are deleted, their queued runs put back in the queue and
   * their other unfinished runs moved to this node, so
   * a sweeper dying half-way leaves them to be swept again with its own.
   */
  async #sweep(): Promise<void> {
    const client = await this.#options.pool.connect();
    const taken: Array<{ node: string; runs: RunRecord[] }> = [];
    try {
      await client.query("BEGIN");
      const dead = await client.query<{ id: string }>(
        "DELETE FROM agentd_nodes WHERE lease_until < now() RETURNING id",
      );
      for (const { id } of dead.rows) {
        // Actions and answers for its runs: those runs end here or go back to the queue.
        await client.query("DELETE FROM agentd_control_messages WHERE node = $1", [id]);
        // Runs it claimed but had not started go back to the queue, for any node within the limits
        // (its sub-agents' runs, queued under a parent that died with it, are ended below).
        const released = await client.query(
          `UPDATE agentd_runs SET claimed_by = NULL
           WHERE claimed_by = $1 AND status = 'queued' AND parent_run IS NULL`,
          [id],
        );
        if ((released.rowCount ?? 0) > 0) await client.query("SELECT pg_notify('agentd_queue', '')");
        const result = await client.query<{ record: unknown }>(
          // The runs it claimed (or wrote last); runs it posted that nobody claimed stay queued.
          `UPDATE agentd_runs SET node = $2, claimed_by = $2
           WHERE claimed_by = $1 AND status NOT IN ('completed', 'failed', 'stopped') RETURNING record`,
          [id, this.id],
        );
        const runs = result.rows.flatMap((row) => {
          const record = parseRunRecord(row.record);
          return record === undefined ? [] : [record];
        });
        taken.push({ node: id, runs });
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    for (const { node, runs } of taken) {
      this.#options.logger.warn(
        { node, runs: runs.length },
        "a node stopped renewing its lease: taking over its runs",
      );
      this.#options.onDeadNodeRuns(node, runs);
    }
  }
}
