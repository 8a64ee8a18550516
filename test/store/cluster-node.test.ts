import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { ClusterNode } from "../../src/store/postgres/cluster-node.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { ManualClock } from "../support/manual-clock.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 300;
const logger = createLogger({ level: "silent", pretty: false });

/**
 * Two nodes on one real PostgreSQL, each renewing on its own clock moved by hand: a node whose
 * clock does not move is a node frozen past its lease, with no real-time window for the test to
 * win or lose. The lease's end is the database's time, which only ever makes the test wait longer.
 */
describe.skipIf(missing !== undefined)("ClusterNode on a manual clock", { timeout: 60_000 }, () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: await postgres.createDatabase("cluster_node") });
    await migrate(pool);
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  function node(clock: ManualClock) {
    const dead: Array<{ node: string; runs: number }> = [];
    let leaseLost = 0;
    const member = new ClusterNode({
      pool,
      logger,
      leaseMilliseconds: LEASE_MILLISECONDS,
      clock,
      onDeadNodeRuns: (id, runs) => dead.push({ node: id, runs: runs.length }),
      onLeaseLost: () => leaseLost++,
    });
    return { member, dead, leaseLost: () => leaseLost };
  }

  const leaseOf = async (id: string) =>
    (
      await pool.query<{ expired: boolean }>(
        "SELECT lease_until < now() AS expired FROM agentd_nodes WHERE id = $1",
        [id],
      )
    ).rows[0];

  const leaseUntil = async (id: string) =>
    (
      await pool.query<{ lease_until: Date }>("SELECT lease_until FROM agentd_nodes WHERE id = $1", [id])
    ).rows[0]?.lease_until.getTime();

  it("renews only on its clock; a node whose clock stands still is swept by the next tick of another", async () => {
    const frozenClock = new ManualClock(0);
    const watcherClock = new ManualClock(0);
    const frozen = node(frozenClock);
    const watcher = node(watcherClock);
    await frozen.member.join();
    await watcher.member.join();
    // One renewal armed each, for a quarter of the lease, and the check at its own deadline.
    expect(frozenClock.pending).toBe(2);
    expect(watcherClock.pending).toBe(2);

    // Nothing renews the frozen node: its lease runs out in the database's time.
    await waitFor(async () => (await leaseOf(frozen.member.id))?.expired, "the frozen node's lease to end");
    // The watcher renews, one renewal at a time, until it has held its lease for two leases of
    // the database's time: only then does it take another node for dead.
    await waitFor(async () => {
      watcherClock.advanceBy(LEASE_MILLISECONDS / 4);
      // Each renewal's answer before the next tick, so its own deadline never passes.
      await new Promise((resolve) => setImmediate(resolve));
      await leaseUntil(watcher.member.id);
      return watcher.dead.length > 0 || undefined;
    }, "the watcher's sweep");
    expect(watcher.member.lease.held()).toBe(true);
    expect(watcher.dead).toEqual([{ node: frozen.member.id, runs: 0 }]);
    expect(await leaseOf(frozen.member.id)).toBeUndefined();
    expect((await leaseOf(watcher.member.id))?.expired).toBe(false);
    expect(frozen.dead).toEqual([]);

    // Awake, its first renewal finds its row gone: it lets its runs go and joins again.
    frozenClock.advanceBy(LEASE_MILLISECONDS / 4);
    await waitFor(
      async () => (await leaseOf(frozen.member.id)) !== undefined,
      "the frozen node to join again",
    );
    expect(frozen.leaseLost()).toBe(1);
    expect(frozen.member.epoch).toBe(1);
    expect(watcher.leaseLost()).toBe(0);

    await frozen.member.leave();
    await watcher.member.leave();
    expect(frozenClock.pending).toBe(0);
    expect(watcherClock.pending).toBe(0);
    expect((await pool.query("SELECT id FROM agentd_nodes")).rowCount).toBe(0);
  });
});
