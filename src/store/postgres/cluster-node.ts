import { randomUUID } from "node:crypto";
import os from "node:os";
import type pg from "pg";
import { type Clock, systemClock } from "../../clock/clock.js";
import type { Logger } from "../../logging/logger.js";
import type { LeaseWatch } from "../cluster-membership.js";
import { LeaseDeadline } from "./lease-deadline.js";
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
   * When to renew and sweep, and this node's own lease deadline (default: the system clock's
   * timers and the monotonic performance.now). The lease itself is reckoned in the database's time,
   * the one clock every node shares: a node whose own clock is ahead must not take the others for
   * dead.
   */
  clock?: Clock;
  /** The unfinished runs of a node found dead, handed over once (to one node only). */
  onDeadNodeRuns: (node: string, runs: RunRecord[]) => void;
  /**
   * This node found its own row gone: it was taken for dead and its runs were taken over or put
   * back in the queue. Called before it joins again, so it stops them before it claims new ones.
   */
  onLeaseLost: () => void;
  /**
   * Each join and renewal reads the database's clock (`clock_timestamp()`) between two readings
   * of `clock`: given to the daemon's clock, which keeps the offset (OffsetClock).
   */
  onClockSample?: (sentAt: number, answeredAt: number, databaseTime: number) => void;
}

/** Renewals per lease: three may fail before this node's own deadline passes. */
const RENEWALS_PER_LEASE = 4;
/**
 * Leases a node must have held without a break before it may take another node for dead: after an
 * outage of the database (or of this node) longer than the lease, every lease in the table has run
 * out, and the first node back must leave the others this long to renew theirs (the lease clock
 * restarts for everyone) instead of ending their healthy runs.
 */
const LIVE_LEASES_BEFORE_SWEEP = 2;

/**
 * This daemon's membership: a row in `agentd_nodes` whose lease it renews four times per lease
 * (each renewal on the clock, the lease's end in the database's time), and its own deadline
 * (LeaseDeadline): past it, `lease.held()` is false and its runs wait at their next step, until a
 * renewal succeeds (they go on) or finds the row gone (they are let go, and the node joins again);
 * and the watch on the others: the node that deletes an expired row (only one can) gets that
 * node's unfinished runs to end or resume. A node sweeps only once its own lease has held without
 * a break for LIVE_LEASES_BEFORE_SWEEP leases, judged on the database's clock.
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
  readonly #deadline: LeaseDeadline;
  /** What `lease` listeners were last told. */
  #held = false;
  readonly #leaseListeners = new Set<(held: boolean) => void>();
  #cancelDeadline: (() => void) | undefined;
  /** The database's time since which this node's lease has held without a break. */
  #liveSince: Date | undefined;
  /** A renewal failed and was logged; the next success says so. */
  #failing = false;
  #left = false;
  /** This node's membership: one more each time it joins again after its lease was lost. */
  #epoch = 0;
  /** Whether join() was called: from then on the lease deadline decides what this node may do. */
  #member = false;
  /** This node's lease as its runs and its writer follow it. */
  readonly lease: LeaseWatch;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    const clock = options.clock;
    this.#deadline = new LeaseDeadline(
      options.leaseMilliseconds,
      clock === undefined || clock === systemClock ? () => performance.now() : () => clock.now(),
    );
    this.id = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.lease = {
      // Before join() this process is no member (agentd run, a store opened to read): it holds no
      // cluster runs, so no lease fences what it writes.
      held: () => !this.#member || this.#deadline.held(),
      onChange: (listener) => {
        this.#leaseListeners.add(listener);
        return () => this.#leaseListeners.delete(listener);
      },
    };
  }

  /** How many times this node joined again after losing its lease (0: never). */
  get epoch(): number {
    return this.#epoch;
  }

  async join(): Promise<void> {
    this.#member = true;
    await this.#insert();
    this.#armRenewal();
  }

  /** Inserts this node's row; its lease holds from the moment the insert was sent. */
  async #insert(): Promise<void> {
    const sentAt = this.#deadline.sending();
    const wallSentAt = this.#clock.now();
    const inserted = await this.#options.pool.query<{ at: Date; clock: Date }>(
      `INSERT INTO agentd_nodes (id, name, url, lease_until) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
       RETURNING now() AS at, clock_timestamp() AS clock`,
      [this.id, this.name, this.#url, this.#options.leaseMilliseconds],
    );
    this.#clockSample(wallSentAt, inserted.rows[0]?.clock);
    this.#liveSince = inserted.rows[0]?.at;
    this.#deadline.renewed(sentAt);
    this.#tellLease();
  }

  /** The database's clock read after `wallSentAt` and before now, for the daemon's clock. */
  #clockSample(wallSentAt: number, databaseTime: Date | undefined): void {
    if (databaseTime === undefined) return;
    this.#options.onClockSample?.(wallSentAt, this.#clock.now(), databaseTime.getTime());
  }

  /**
   * Tells the lease's listeners that it holds (after each renewal) or that it stopped holding, and
   * arms the check at its deadline: past it, with no renewal meanwhile, they are told it does not.
   */
  #tellLease(): void {
    const held = this.#deadline.held();
    this.#cancelDeadline?.();
    this.#cancelDeadline = undefined;
    if (held && !this.#left)
      this.#cancelDeadline = this.#clock.setTimer(() => this.#tellLease(), this.#deadline.remaining() + 1);
    // Held is told after every renewal: a run held by its own reading of the deadline (before
    // the timer here ran) waits for it.
    if (!held && !this.#held) return;
    const lapsed = !held && this.#held;
    this.#held = held;
    if (lapsed)
      this.#options.logger.warn(
        { node: this.id },
        "this node's lease was not renewed in time: its runs wait at their next step until it is",
      );
    for (const listener of this.#leaseListeners) listener(held);
  }

  /** Renews every quarter of the lease, counted from each renewal's start (one at a time: #tick). */
  #armRenewal(): void {
    const every = Math.max(50, Math.floor(this.#options.leaseMilliseconds / RENEWALS_PER_LEASE));
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
    this.#left = true;
    this.#cancelRenewal?.();
    this.#cancelRenewal = undefined;
    this.#cancelDeadline?.();
    this.#cancelDeadline = undefined;
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
      const sentAt = this.#deadline.sending();
      const wallSentAt = this.#clock.now();
      const renewed = await this.#options.pool.query<{ at: Date; clock: Date }>(
        "UPDATE agentd_nodes SET lease_until = now() + $2 * interval '1 millisecond' WHERE id = $1 RETURNING now() AS at, clock_timestamp() AS clock",
        [this.id, this.#options.leaseMilliseconds],
      );
      this.#clockSample(wallSentAt, renewed.rows[0]?.clock);
      // Left meanwhile: the row is gone because this node deleted it.
      if (this.#cancelRenewal === undefined) return;
      if (renewed.rowCount === 0) {
        this.#options.logger.error(
          { node: this.id },
          "this node's lease had expired: the cluster took it for dead and took its runs; stopping them here and joining again",
        );
        this.#deadline.lapse();
        this.#tellLease();
        // Its runs are let go (and its writes of them dropped) before it joins again.
        this.#options.onLeaseLost();
        this.#epoch += 1;
        await this.#insert();
      } else {
        // A lease that lapsed before this renewal came back: the break restarts its live time.
        if (!this.#deadline.held()) this.#liveSince = renewed.rows[0]?.at;
        this.#deadline.renewed(sentAt);
        this.#tellLease();
      }
      if (this.#failing) this.#options.logger.info({ node: this.id }, "cluster lease renewed again");
      this.#failing = false;
      if (this.#deadline.held()) await this.#sweep();
    } catch (error) {
      if (!this.#failing)
        this.#options.logger.warn(
          { err: error, node: this.id },
          "cannot renew the lease or sweep: PostgreSQL unreachable; this node's runs wait at their next step once its deadline passes",
        );
      this.#failing = true;
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
      // Only a node live for LIVE_LEASES_BEFORE_SWEEP leases takes another for dead: after an
      // outage, every lease has run out, and the others get that long to renew theirs.
      const dead = await client.query<{ id: string }>(
        `DELETE FROM agentd_nodes WHERE lease_until < now()
           AND now() > $1::timestamptz + $2 * interval '1 millisecond' RETURNING id`,
        [this.#liveSince ?? new Date(), this.#options.leaseMilliseconds * LIVE_LEASES_BEFORE_SWEEP],
      );
      for (const { id } of dead.rows) {
        // Actions and answers for its runs: those runs end here or go back to the queue.
        await client.query("DELETE FROM agentd_control_messages WHERE node = $1", [id]);
        // Runs it claimed but had not started go back to the queue, for any node within the limits
        // (its sub-agents' runs, queued under a parent that died with it, are ended below).
        const released = await client.query(
          // Put back by this node: the dead node's late events of them are refused (write-batch).
          `UPDATE agentd_runs SET claimed_by = NULL, node = $2
           WHERE claimed_by = $1 AND status = 'queued' AND parent_run IS NULL`,
          [id, this.id],
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
      client.release(true);
      throw error;
    }
    client.release();
    for (const { node, runs } of taken) {
      this.#options.logger.warn(
        { node, runs: runs.length },
        "a node stopped renewing its lease: taking over its runs",
      );
      this.#options.onDeadNodeRuns(node, runs);
    }
  }
}
