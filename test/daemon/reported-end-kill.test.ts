import pg from "pg";
import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, runEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const missing = postgresMissingReason();

/** The statuses a run's `status` events told, in order. */
async function toldStatuses(daemon: DaemonProcess, run: string): Promise<string[]> {
  return (await runEvents(daemon, run)).flatMap((event) =>
    event.type === "status" ? [event.data.status] : [],
  );
}

/** The advisory lock a `completed` run row's write waits on while the test holds it. */
const HOLD = 4242;

/**
 * A run is reported with a status only once that status is durable (SPEC durability: nothing
 * reported is lost or changed): on PostgreSQL once committed, on the files store once its record
 * file is written (in the kernel, safe from kill -9). The write of a run's `completed` row is held
 * in the database (a trigger waits on a lock the test holds): meanwhile the API still reports the
 * run unfinished, and no `completed` event is out. Once it commits, a kill -9 the moment the API says
 * completed loses nothing: the row says completed, a restarted node reports it completed (never
 * `crashed`), and the agent's next run is not blocked by the dead node's lease.
 */
describe("a run's end reported, then kill -9", { timeout: 120_000 }, () => {
  const kit = useTestKit();

  it.skipIf(missing !== undefined)(
    "reports completed only once the row is committed, and a kill -9 right after loses nothing",
    async () => {
      const cluster = await startPostgresCluster(kit, {
        nodes: 1,
        // Longer than the test: a row left running would block the next run for all of it.
        lease: 600_000,
        reply: textReply("done"),
        agents: (project) => project.writeAgent("closer", {}),
      });
      let daemon = cluster.nodes[0] as DaemonProcess;
      const admin = new pg.Client({ connectionString: cluster.postgres.url });
      await admin.connect();
      kit.defer(() => admin.end());
      await admin.query("SELECT pg_advisory_lock($1)", [HOLD]);
      await admin.query(`CREATE FUNCTION hold_completed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${HOLD}); RETURN NEW; END $$`);
      await admin.query(`CREATE TRIGGER hold_completed BEFORE UPDATE ON agentd_runs FOR EACH ROW
      WHEN (NEW.status = 'completed') EXECUTE FUNCTION hold_completed()`);

      const run = await startRun(daemon, "closer", "finish");
      await waitFor(async () => {
        const waiting = await admin.query(
          "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        return waiting.rowCount === 1 ? true : undefined;
      }, "the completed row's write to wait");
      // The run ended in the node's memory; its end is not committed, so it is not reported.
      // (Its start may be in the same held write as its end under load: then it is still queued.)
      expect(["queued", "running"]).toContain((await getRun(daemon, run)).status);
      expect(await toldStatuses(daemon, run)).not.toContain("completed");

      await admin.query("DROP TRIGGER hold_completed ON agentd_runs");
      await admin.query("SELECT pg_advisory_unlock($1)", [HOLD]);
      // As soon as the API says completed: kill -9.
      for (
        let record = await getRun(daemon, run);
        record.status !== "completed";
        record = await getRun(daemon, run)
      )
        expect(["queued", "running"]).toContain(record.status);
      await daemon.kill();
      const row = await admin.query<{ status: string }>("SELECT status FROM agentd_runs WHERE id = $1", [
        run,
      ]);
      expect(row.rows[0]?.status).toBe("completed");

      daemon = await cluster.restart(0);
      expect(await getRun(daemon, run)).toMatchObject({ status: "completed" });
      const next = await startRun(daemon, "closer", "again");
      expect(await waitForRunEnd(daemon, next)).toMatchObject({ status: "completed" });
      expect(await getRun(daemon, run)).toMatchObject({ status: "completed" });
      const statuses = await toldStatuses(daemon, run);
      expect(statuses.filter((status) => status !== "queued" && status !== "running")).toEqual(["completed"]);
    },
  );

  it("on the files store too: a kill -9 as soon as the API says completed loses nothing", async () => {
    const { project } = await kit.scriptedProject(textReply("done"));
    project.writeAgent("closer", {});
    const first = await kit.daemon(project.configFile);
    const run = await startRun(first, "closer", "finish");
    for (
      let record = await getRun(first, run);
      record.status !== "completed";
      record = await getRun(first, run)
    )
      expect(["queued", "running"]).toContain(record.status);
    await first.kill();

    const second = await kit.daemon(project.configFile);
    expect(await getRun(second, run)).toMatchObject({ status: "completed" });
    expect(await toldStatuses(second, run)).toContain("completed");
    const next = await startRun(second, "closer", "again");
    expect(await waitForRunEnd(second, next)).toMatchObject({ status: "completed" });
  });
});
