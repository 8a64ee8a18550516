import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();
const LEASE_MILLISECONDS = 6_000;
/** Kills, each of the node that claimed the latest fire while no run could be written. */
const KILLS = 3;
/** Lease expiry, the sweeps and a loaded machine: generous. */
const SETTLE_MILLISECONDS = 120_000;

interface MissedData {
  scheduled_for: string;
  on_missed: string;
  count: number;
  run?: string;
}

/**
 * Kill -9 during claims, on three real daemons and a one-second cron: each time, the node that
 * just claimed a fire is killed before its run can be written (a lock on the runs table holds
 * every run write meanwhile), then started again. Counted over every fire from the earliest one
 * the first kill left unsettled to the last report: fires lost (neither run nor counted by a
 * `missed` report) 0, fires doubled (run twice, or run and reported) 0.
 */
describe.skipIf(missing !== undefined)("kill -9 during fire claims", { timeout: 420_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Client;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 3,
      lease: LEASE_MILLISECONDS,
      reply: textReply("tick done"),
      config: () => ({ scheduler: { queue_limit: 1_000 }, concurrency: 20 }),
      agents: (project) =>
        project.writeAgent("ticker", {
          schedule: { cron: "* * * * * *", task: "tick", overlap: "queue", on_missed: "run_once" },
          limits: { max_concurrent_runs: 50 },
        }),
    });
    database = new pg.Client({ connectionString: cluster.postgres.url });
    await database.connect();
  }, 240_000);

  afterAll(async () => {
    await database?.end().catch(() => undefined);
  });

  async function tickerRuns(): Promise<RunRecord[]> {
    const rows = await database.query<{ record: string }>(
      "SELECT record FROM agentd_runs WHERE agent = 'ticker'",
    );
    return rows.rows.map((row) => JSON.parse(row.record) as RunRecord);
  }

  async function reports(since: string): Promise<MissedData[]> {
    const rows = await database.query<{ line: string }>(
      "SELECT line FROM agentd_events WHERE agent = 'ticker' ORDER BY id",
    );
    return rows.rows
      .map((row) => JSON.parse(row.line) as { type: string; data: MissedData })
      .filter((event) => event.type === "missed" && event.data.scheduled_for >= since)
      .map((event) => event.data);
  }

  it("loses no fire and runs none twice", async () => {
    let since: string | undefined;
    let orphaned = 0;
    /** The latest fire a killed node left claimed and unsettled: a report must reach it. */
    let latestOrphan = "";
    /** Per kill: the fire that picked the victim, and every claim the victim left unsettled. */
    const kills: Array<{ claimed: string; held: string[] }> = [];
    for (let kill = 0; kill < KILLS; kill++) {
      const locker = new pg.Client({ connectionString: cluster.postgres.url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        await locker.query("LOCK TABLE agentd_runs IN SHARE MODE");
        const lockedAt = new Date().toISOString();
        const claim = await waitFor(async () => {
          const rows = await database.query<{ node: string; scheduled_for: string }>(
            "SELECT node, scheduled_for FROM agentd_schedule_fires WHERE agent = 'ticker' AND NOT settled AND scheduled_for > $1 ORDER BY scheduled_for LIMIT 1",
            [lockedAt],
          );
          return rows.rows[0];
        }, "a fire claimed while no run can be written");
        const victim = cluster.nodeWithId(claim.node);
        const index = cluster.nodes.indexOf(victim);
        await victim.kill();
        const held = await database.query<{ scheduled_for: string }>(
          "SELECT scheduled_for FROM agentd_schedule_fires WHERE node = $1 AND NOT settled ORDER BY scheduled_for",
          [claim.node],
        );
        // The window starts at the first kill's earliest orphan, not at the fire that picked the
        // victim: a fire it claimed just before the lock, whose run the lock held too, is orphaned
        // with the others and counted by the same catch-up.
        since ??= [claim.scheduled_for, ...held.rows.map((row) => row.scheduled_for)].sort()[0];
        orphaned += held.rows.length;
        kills.push({ claimed: claim.scheduled_for, held: held.rows.map((row) => row.scheduled_for) });
        latestOrphan = held.rows.at(-1)?.scheduled_for ?? latestOrphan;
        await locker.query("COMMIT");
        await cluster.restart(index);
      } finally {
        await locker.end().catch(() => undefined);
      }
    }
    const first = since as string;
    expect(orphaned).toBeGreaterThanOrEqual(KILLS);

    /**
     * Every fire from the first kill's earliest orphan up to the latest catch-up (a run under
     * `run_once`, whose record says how many fires it stands for, or a `skip` report), once all of
     * them are settled.
     */
    const tally = async () => {
      const found = await reports(first);
      const runs = await tickerRuns();
      const catchUps = runs.flatMap((run) =>
        run.trigger.kind === "missed" && run.trigger.scheduled_for >= first
          ? [{ id: run.id, scheduled_for: run.trigger.scheduled_for, fires: run.trigger.fires }]
          : [],
      );
      const skips = found.filter((data) => data.on_missed === "skip");
      const horizon = [...catchUps, ...skips].reduce(
        (latest, data) => (data.scheduled_for > latest ? data.scheduled_for : latest),
        first,
      );
      if (horizon < latestOrphan)
        return { settled: false as const, waiting: `a catch-up up to ${latestOrphan}`, found, catchUps };
      const claims = await database.query<{ scheduled_for: string; settled: boolean; node: string }>(
        "SELECT scheduled_for, settled, node FROM agentd_schedule_fires WHERE agent = 'ticker' AND scheduled_for >= $1 AND scheduled_for <= $2 ORDER BY scheduled_for",
        [first, horizon],
      );
      const open = claims.rows.filter((row) => !row.settled).map((row) => row.scheduled_for);
      if (open.length > 0)
        return { settled: false as const, waiting: "claims to be settled", open, found, catchUps };
      const scheduledRuns = runs.flatMap((run) =>
        run.trigger.kind === "schedule" && run.trigger.scheduled_for >= first
          ? [run.trigger.scheduled_for]
          : [],
      );
      const ran = new Set(scheduledRuns);
      const unrun = claims.rows.map((row) => row.scheduled_for).filter((time) => !ran.has(time));
      const counted =
        skips.reduce((sum, data) => sum + data.count, 0) +
        catchUps.reduce((sum, run) => sum + (run.fires ?? 0), 0);
      // Every second of the window is a fire: one with no claim at all was never looked at.
      const expected = (Date.parse(horizon) - Date.parse(first)) / 1_000 + 1;
      return {
        settled: true as const,
        lost: expected - claims.rows.length + Math.max(0, unrun.length - counted),
        doubled: scheduledRuns.length - ran.size + Math.max(0, counted - unrun.length),
        counted,
        unrun: unrun.length,
        found,
        catchUps,
        // What a failed tally prints: every claim, every run of the window and what it ran for.
        claims: claims.rows.map((row) => `${row.scheduled_for} ${row.node}`),
        runs: runs
          .filter((run) => "scheduled_for" in run.trigger && run.trigger.scheduled_for >= first)
          .map((run) => ({ id: run.id, node: run.node, trigger: run.trigger, status: run.status }))
          .sort((left, right) => JSON.stringify(left.trigger).localeCompare(JSON.stringify(right.trigger))),
        unrunFires: unrun,
        kills,
      };
    };
    const settled = await waitFor(
      async () => {
        const result = await tally();
        return result.settled ? result : undefined;
      },
      "every fire of the kills claimed, settled and counted",
      SETTLE_MILLISECONDS,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(await tally())}`);
    });
    const { lost, doubled } = settled;
    expect(
      { lost, doubled },
      `tally of every fire since ${first}: ${JSON.stringify(settled, null, 1)}`,
    ).toEqual({
      lost: 0,
      doubled: 0,
    });
    expect(settled.unrun).toBeGreaterThanOrEqual(KILLS);
    // run_once: every catch-up run's record says how many fires it stands for; its `missed`
    // event is the notice (a kill right after the run's record may lose it, never the account),
    // and each one written names a catch-up run, once.
    expect(settled.catchUps.every((run) => run.fires !== undefined && run.fires > 0)).toBe(true);
    expect(settled.found.every((data) => data.on_missed === "run_once")).toBe(true);
    const named = settled.found.map((data) => data.run);
    expect(new Set(named).size).toBe(named.length);
    const catchUpIds = new Set(settled.catchUps.map((run) => run.id));
    expect(named.filter((run) => run === undefined || !catchUpIds.has(run))).toEqual([]);
  });
});
