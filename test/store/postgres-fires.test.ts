import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { getRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import {
  type MissedData,
  TICKER_CONFIG,
  tickerMissedReports,
  tickerRuns as tickerRunsIn,
  writeTicker,
} from "../support/postgres-ticker.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 6_000;
/** Sweeps, lease expiry and a loaded machine: generous. */
const SETTLE_MILLISECONDS = 60_000;

/**
 * Fires are never lost in silence: a fire claimed by a node killed before its run was written, or
 * due while PostgreSQL was away, is run or reported (`on_missed: run_once`: one catch-up run and a
 * `missed` event), exactly once across two real daemons.
 */
describe.skipIf(missing !== undefined)("schedule fires on a cluster", { timeout: 240_000 }, () => {
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

  const tickerRuns = () => tickerRunsIn(database);
  const missedEvents = () => tickerMissedReports(database);

  /** No fire ran twice: each scheduled time has one run at most, in the whole cluster. */
  async function expectNoFireRunTwice(): Promise<void> {
    const times = (await tickerRuns()).map((run) =>
      "scheduled_for" in run.trigger ? run.trigger.scheduled_for : "",
    );
    const repeated = times.filter((time, index) => times.indexOf(time) !== index);
    expect(repeated).toEqual([]);
  }

  it("runs or reports once the fires a node claimed and died before recording", async () => {
    const locker = new pg.Client({ connectionString: cluster.postgres.url });
    await locker.connect();
    let victimIndex: number | undefined;
    try {
      // Nothing can write a run while this holds: the next fires are claimed, their runs wait.
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE agentd_runs IN SHARE MODE");
      const since = new Date().toISOString();
      const claim = await waitFor(async () => {
        const rows = await database.query<{ node: string; scheduled_for: string }>(
          "SELECT node, scheduled_for FROM agentd_schedule_fires WHERE agent = 'ticker' AND NOT settled AND scheduled_for > $1 ORDER BY scheduled_for LIMIT 1",
          [since],
        );
        return rows.rows[0];
      }, "a fire claimed after the lock");
      const victim = cluster.nodeWithId(claim.node);
      victimIndex = cluster.nodes.indexOf(victim);
      const survivor = cluster.nodes.find((node) => node !== victim) as DaemonProcess;
      await victim.kill();
      const dead = await database.query<{ scheduled_for: string }>(
        "SELECT scheduled_for FROM agentd_schedule_fires WHERE node = $1 AND NOT settled ORDER BY scheduled_for",
        [claim.node],
      );
      const lost = dead.rows.map((row) => row.scheduled_for);
      expect(lost).toContain(claim.scheduled_for);
      await locker.query("COMMIT");

      const latest = lost.at(-1) as string;
      const report = await waitFor(
        async () => (await missedEvents()).find((data) => data.scheduled_for === latest),
        "a missed event for the dead node's fires",
        SETTLE_MILLISECONDS,
      );
      expect(report).toMatchObject({ on_missed: "run_once", count: lost.length });
      const catchUp = await getRun(survivor, report.run as string);
      expect(catchUp.trigger).toEqual({ kind: "missed", scheduled_for: latest, fires: lost.length });
      const unsettled = await database.query(
        "SELECT 1 FROM agentd_schedule_fires WHERE scheduled_for = ANY($1::text[]) AND NOT settled",
        [lost],
      );
      expect(unsettled.rowCount).toBe(0);
      // Exactly once: one report, one catch-up run, and no run of the dead node's fires besides it.
      expect((await missedEvents()).filter((data) => lost.includes(data.scheduled_for))).toHaveLength(1);
      const ofLost = (await tickerRuns()).filter(
        (run) => "scheduled_for" in run.trigger && lost.includes(run.trigger.scheduled_for),
      );
      expect(ofLost.map((run) => run.id)).toEqual([catchUp.id]);
      await expectNoFireRunTwice();
    } finally {
      await locker.end().catch(() => undefined);
    }
    // The dead node comes back for the next test.
    if (victimIndex !== undefined) await cluster.restart(victimIndex);
  });

  it("runs or reports once the fires due while PostgreSQL was away", async () => {
    await expectNoFireRunTwice();
    // From a few fires before the outage: a fire due as it began is missed too, and counted.
    const since = new Date(Math.floor(Date.now() / 1_000) * 1_000 - 3_000).toISOString();
    await cluster.postgres.pause();
    const pausedAt = Date.now();
    // Three whole seconds of fires with no database.
    const firstDue = Math.ceil(pausedAt / 1_000) * 1_000 + 1_000;
    const lastDue = firstDue + 2_000;
    await waitFor(async () => (Date.now() > lastDue + 300 ? true : undefined), "three fires to be due");
    await cluster.postgres.resume();

    const due = [firstDue, firstDue + 1_000, lastDue].map((time) => new Date(time).toISOString());
    /** The reports since the outage began; the fires they can cover end at the latest one's time. */
    const reports = async (): Promise<MissedData[]> =>
      (await missedEvents()).filter((data) => data.scheduled_for >= since);
    const horizonOf = (found: MissedData[]): string =>
      found.reduce((latest, data) => (data.scheduled_for > latest ? data.scheduled_for : latest), since);
    /** Fires from the outage on, up to `horizon`, that no scheduled run took: each counted by one report. */
    const unrun = async (horizon: string): Promise<string[]> => {
      const rows = await database.query<{ scheduled_for: string }>(
        "SELECT scheduled_for FROM agentd_schedule_fires WHERE agent = 'ticker' AND scheduled_for >= $1 AND scheduled_for <= $2 ORDER BY scheduled_for",
        [since, horizon],
      );
      const scheduled = new Set(
        (await tickerRuns()).flatMap((run) =>
          run.trigger.kind === "schedule" ? [run.trigger.scheduled_for] : [],
        ),
      );
      return rows.rows.map((row) => row.scheduled_for).filter((time) => !scheduled.has(time));
    };
    /**
     * Once every claim up to the latest report is settled, each fire up to it that no scheduled
     * run took is counted by exactly one report: the counts add up to those fires.
     */
    const accounted = async (): Promise<{ found: MissedData[]; missed: string[] } | undefined> => {
      const found = await reports();
      const horizon = horizonOf(found);
      if (horizon < (due.at(-1) as string)) return undefined;
      const open = await database.query(
        "SELECT 1 FROM agentd_schedule_fires WHERE agent = 'ticker' AND scheduled_for >= $1 AND scheduled_for <= $2 AND NOT settled",
        [since, horizon],
      );
      const missed = await unrun(horizon);
      const counted = found.reduce((sum, data) => sum + data.count, 0);
      return open.rowCount === 0 && counted === missed.length ? { found, missed } : undefined;
    };
    await waitFor(
      accounted,
      "every fire of the outage claimed, settled and counted by a report",
      SETTLE_MILLISECONDS,
    ).catch(async (error: unknown) => {
      const found = await reports();
      const state = { since, due, missed: await unrun(horizonOf(found)), found };
      throw new Error(`${String(error)}: ${JSON.stringify(state)}`);
    });
    // A sweep later, still once: no fire is reported twice.
    const later = Date.now() + 6_000;
    await waitFor(async () => (Date.now() > later ? true : undefined), "one more sweep");
    const { found, missed } = await waitFor(accounted, "the count to hold");
    expect(missed).toEqual(expect.arrayContaining(due));
    expect(found.every((data) => data.on_missed === "run_once" && data.run !== undefined)).toBe(true);
    // One catch-up run per report, of a fire no scheduled run took.
    const catchUps = (await tickerRuns()).filter(
      (run) => run.trigger.kind === "missed" && run.trigger.scheduled_for >= since,
    );
    expect(catchUps.map((run) => run.id).sort()).toEqual(found.map((data) => data.run).sort());
    await expectNoFireRunTwice();
  });
});
