import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { TICKER_CONFIG, tickerMissedReports, tickerRuns, writeTicker } from "../support/postgres-ticker.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 2_000;
/** Sweeps, lease expiry and a loaded machine: generous. */
const SETTLE_MILLISECONDS = 90_000;

/** The fire a run stands for: its own scheduled time, or the latest of those a catch-up covers. */
function fireOf(run: RunRecord): string | undefined {
  return "scheduled_for" in run.trigger ? run.trigger.scheduled_for : undefined;
}

/**
 * docs/scale-out.md: every fire runs once across the cluster, when a node dies and when a node is
 * only frozen. A node that claimed a fire and was frozen (SIGSTOP) before its run was written, past
 * its lease, is taken for dead; once it wakes it finds its lease lost, lets its runs go and joins
 * again under the same id. The fire it claimed must still run exactly once: not twice (the frozen
 * node's late write and another node's catch-up), and not never (a claim left open that no node
 * takes, the frozen node being a member again, or a run recorded that nobody runs).
 */
describe.skipIf(missing !== undefined)("a node frozen around a claimed fire", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      lease: LEASE_MILLISECONDS,
      reply: textReply("tick done"),
      config: () => TICKER_CONFIG,
      agents: writeTicker,
    });
    database = cluster.database;
  }, 180_000);

  /**
   * Freezes a node holding two claimed fires whose runs are not written yet, until the other node
   * took it for dead (and, with `untilClaimsTaken`, took its open claims over too), then wakes it
   * and checks every fire of the episode ran exactly once.
   */
  async function freezeAroundClaims(untilClaimsTaken: boolean): Promise<void> {
    const locker = new pg.Client({ connectionString: cluster.postgres.url });
    await locker.connect();
    let frozen: DaemonProcess | undefined;
    let since = "";
    try {
      // Nothing can write a run while this holds: fires are claimed, their runs wait in the database.
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE agentd_runs IN SHARE MODE");
      since = new Date().toISOString();
      // A node claimed two fires since: the first one's run write waits for the lock in the
      // database, the second one's in the node's own queue behind it. Both nodes' writes wait.
      // What the last probe saw, shown if the wait fails.
      let seen: unknown;
      const claim = await waitFor(
        async () => {
          const claims = await database.query<{ node: string; scheduled_for: string }>(
            "SELECT node, scheduled_for FROM agentd_schedule_fires WHERE agent = 'ticker' AND NOT settled AND scheduled_for > $1 ORDER BY scheduled_for",
            [since],
          );
          const waiting = await database.query<{ query: string; wait_event_type: string | null }>(
            "SELECT left(query, 60) AS query, wait_event_type FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'",
          );
          const counts = new Map<string, number>();
          for (const row of claims.rows) counts.set(row.node, (counts.get(row.node) ?? 0) + 1);
          const twice = [...counts].find(([, count]) => count >= 2);
          // A run's write waits at its first statement on agentd_runs: an INSERT, or on a loaded
          // machine, where a node writes several runs at once, a SELECT or UPDATE of them.
          const blocked = waiting.rows.filter(
            (row) =>
              row.wait_event_type === "Lock" && /^(INSERT|SELECT|UPDATE)\b.*\bagentd_runs\b/.test(row.query),
          );
          const nodes = await database.query("SELECT id FROM agentd_nodes");
          seen = { claims: Object.fromEntries(counts), active: waiting.rows, nodes: nodes.rows };
          return counts.size === 2 && twice !== undefined && blocked.length >= 2
            ? { node: twice[0] }
            : undefined;
        },
        "a node with two claimed fires whose runs wait",
        SETTLE_MILLISECONDS,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; last seen: ${JSON.stringify({ seen, since })}`);
      });
      frozen = cluster.nodeWithId(claim.node);
      frozen.signal("SIGSTOP");
      await locker.query("COMMIT");
      // The other node takes the frozen one for dead.
      await waitFor(
        async () => {
          const rows = await database.query("SELECT 1 FROM agentd_nodes WHERE id = $1", [claim.node]);
          return rows.rowCount === 0 || undefined;
        },
        "the frozen node's lease to be taken",
        SETTLE_MILLISECONDS,
      );
      if (untilClaimsTaken)
        await waitFor(
          async () => {
            const open = await database.query(
              "SELECT 1 FROM agentd_schedule_fires WHERE node = $1 AND NOT settled AND scheduled_for > $2",
              [claim.node, since],
            );
            return open.rowCount === 0 || undefined;
          },
          "the other node to take the frozen one's open claims",
          SETTLE_MILLISECONDS,
        );
    } finally {
      frozen?.signal("SIGCONT");
      await locker.end().catch(() => undefined);
    }
    const woken = frozen as DaemonProcess;
    await waitFor(
      async () => ((await woken.request("GET", "/health")).status === 200 ? true : undefined),
      "the woken node to answer",
      SETTLE_MILLISECONDS,
    );
    // A few fires after the wake, so the horizon covers the whole episode.
    const horizon = new Date(Date.now() + 3_000).toISOString();

    /** The fires from `since` to the horizon, once all are settled and their runs ended. */
    const settled = async () => {
      const claims = await database.query<{ scheduled_for: string; settled: boolean }>(
        "SELECT scheduled_for, settled FROM agentd_schedule_fires WHERE agent = 'ticker' AND scheduled_for > $1 AND scheduled_for <= $2 ORDER BY scheduled_for",
        [since, horizon],
      );
      if (claims.rows.length === 0 || claims.rows.some((row) => !row.settled)) return undefined;
      const last = claims.rows.at(-1)?.scheduled_for as string;
      if (last < new Date(Date.parse(horizon) - 1_000).toISOString()) return undefined;
      const runs = (await tickerRuns(database)).filter((run) => {
        const fire = fireOf(run);
        return fire !== undefined && fire > since && fire <= horizon;
      });
      if (runs.some((run) => run.ended_at === undefined)) return undefined;
      return { fires: claims.rows.map((row) => row.scheduled_for), runs };
    };
    const state = await waitFor(
      settled,
      "every fire of the episode settled and run",
      SETTLE_MILLISECONDS,
    ).catch(async (error: unknown) => {
      const claims = await database.query(
        "SELECT scheduled_for, node, settled FROM agentd_schedule_fires WHERE agent = 'ticker' AND scheduled_for > $1 AND scheduled_for <= $2 ORDER BY scheduled_for",
        [since, horizon],
      );
      const runs = (await tickerRuns(database))
        .filter((run) => (fireOf(run) ?? "") > since)
        .map((run) => ({ id: run.id, status: run.status, node: run.node, trigger: run.trigger }));
      const nodes = await database.query("SELECT id FROM agentd_nodes");
      throw new Error(
        `${String(error)}: ${JSON.stringify({ claims: claims.rows, runs, nodes: nodes.rows, since, horizon })}`,
      );
    });
    // Each fire ran once: by its own run, or counted once by a catch-up run's report.
    const scheduled = state.runs.filter((run) => run.trigger.kind === "schedule").map(fireOf);
    const reports = (await tickerMissedReports(database)).filter(
      (data) => data.scheduled_for > since && data.scheduled_for <= horizon,
    );
    const counted = reports.reduce((sum, data) => sum + data.count, 0);
    expect(new Set(scheduled).size).toBe(scheduled.length);
    expect(scheduled.length + counted).toBe(state.fires.length);
    expect(state.runs.every((run) => run.status === "completed")).toBe(true);
  }

  it("runs every fire exactly once when the node wakes right after it was taken for dead", async () => {
    await freezeAroundClaims(false);
  });

  it("runs every fire exactly once when the node wakes after its claims were taken over", async () => {
    await freezeAroundClaims(true);
  });
});
