import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { captureMails } from "../support/mail-capture.js";
import { startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import type { TempProject } from "../support/temp-project.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { getRun, listRuns, startRun, waitForRunEnd } from "./api-shapes.js";

const missing = postgresMissingReason();

/** The advisory lock the held writes (deliveries, the follower's run) wait on while the test holds it. */
const HOLD = 4343;

interface Delivery {
  run: string | null;
  target: string;
  status: string;
}

async function deliveriesOf(daemon: DaemonProcess, run: string): Promise<Delivery[]> {
  const { deliveries } = (await daemon.request("GET", "/deliveries")).body as { deliveries: Delivery[] };
  return deliveries.filter((delivery) => delivery.run === run);
}

/** A writer delivering to a webhook and by email, and a checker following each of its runs. */
function writeAgents(project: TempProject, hookUrl: string): void {
  project.writeAgent("writer", {
    deliver: [
      { to: "slack", url: `${hookUrl}/services/x` },
      { to: "email", recipients: ["lead@example.test"], subject: "Written" },
    ],
  });
  project.writeAgent("checker", {
    triggers: [{ after: { agent: "writer" }, task: "Check {{upstream.id}}" }],
  });
}

/**
 * A run's follow-ups — its deliveries, its `after` triggers' runs — are decided a moment after its
 * end is recorded. A daemon killed (kill -9) in that moment finds the run still owed them at its
 * next start (data_dir/follow-ups/) and decides them then, once. The moment is held in the
 * database: the run's end commits, while the writes of its deliveries and of the follower's run
 * wait on a lock the test holds; the kill rolls them back.
 */
describe("a kill -9 between a run's end and its follow-ups", { timeout: 150_000 }, () => {
  const kit = useTestKit();

  it.skipIf(missing !== undefined)(
    "sends the deliveries and starts the follower at the next start, each once",
    async () => {
      const hook = await recordingReceiver(kit);
      const mail = await captureMails();
      kit.defer(mail.close);
      const cluster = await startPostgresCluster(kit, {
        nodes: 1,
        // Longer than the test: the killed node's lease must not matter.
        lease: 600_000,
        reply: textReply("the page is written"),
        config: () => ({
          deliveries: { smtp: { host: "127.0.0.1", port: mail.port, secure: false, require_tls: false } },
        }),
        agents: (project) => writeAgents(project, hook.url),
      });
      let daemon = cluster.nodes[0] as DaemonProcess;
      const admin = new pg.Client({ connectionString: cluster.postgres.url });
      await admin.connect();
      kit.defer(() => admin.end());
      await admin.query("SELECT pg_advisory_lock($1)", [HOLD]);
      await admin.query(`CREATE FUNCTION hold_follow_up() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${HOLD}); RETURN NEW; END $$`);
      await admin.query(`CREATE TRIGGER hold_delivery BEFORE INSERT OR UPDATE ON agentd_deliveries
      FOR EACH ROW EXECUTE FUNCTION hold_follow_up()`);
      await admin.query(`CREATE TRIGGER hold_follower BEFORE INSERT ON agentd_runs FOR EACH ROW
      WHEN (NEW.agent = 'checker') EXECUTE FUNCTION hold_follow_up()`);

      const run = await startRun(daemon, "writer", "write the page");
      await waitFor(async () => {
        const ended = await admin.query("SELECT 1 FROM agentd_runs WHERE id = $1 AND status = 'completed'", [
          run,
        ]);
        const waiting = await admin.query(
          "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        return ended.rowCount === 1 && (waiting.rowCount ?? 0) > 0 ? true : undefined;
      }, "the run's end committed and its follow-ups' writes waiting");
      await daemon.kill();
      // The killed node's connections still wait on the lock: ended, their writes roll back.
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      await waitFor(async () => {
        const waiting = await admin.query(
          "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        return waiting.rowCount === 0 ? true : undefined;
      }, "the killed node's held writes gone");
      expect(hook.received).toHaveLength(0);
      expect(mail.mails).toHaveLength(0);
      expect((await admin.query("SELECT 1 FROM agentd_deliveries")).rowCount).toBe(0);
      expect((await admin.query("SELECT 1 FROM agentd_runs WHERE agent = 'checker'")).rowCount).toBe(0);

      await admin.query("DROP TRIGGER hold_delivery ON agentd_deliveries");
      await admin.query("DROP TRIGGER hold_follower ON agentd_runs");
      await admin.query("SELECT pg_advisory_unlock($1)", [HOLD]);
      daemon = await cluster.restart(0);
      expect(await getRun(daemon, run)).toMatchObject({ status: "completed" });
      // Decided before the API serves: both deliveries stored, the follower recorded.
      expect(await deliveriesOf(daemon, run)).toHaveLength(2);
      const followers = await listRuns(daemon, "?agent=checker");
      expect(followers).toHaveLength(1);
      expect(followers[0]?.task).toBe(`Check ${run}`);
      await waitForRunEnd(daemon, followers[0]?.id ?? "");
      await waitFor(async () => {
        const made = await deliveriesOf(daemon, run);
        return made.length === 2 && made.every((delivery) => delivery.status === "sent") ? true : undefined;
      }, "both deliveries sent");
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]?.body).toContain("the page is written");
      expect(mail.mails).toHaveLength(1);
      expect(mail.mails[0]?.to).toEqual(["lead@example.test"]);

      // A second start finds nothing owed: nothing is made again.
      daemon.signal("SIGTERM");
      await daemon.exited;
      daemon = await cluster.restart(0);
      expect(await deliveriesOf(daemon, run)).toHaveLength(2);
      expect(await listRuns(daemon, "?agent=checker")).toHaveLength(1);
      expect(hook.received).toHaveLength(1);
      expect(mail.mails).toHaveLength(1);
    },
  );

  it("makes nothing again at a restart after a run whose follow-ups were made", async () => {
    const hook = await recordingReceiver(kit);
    const mail = await captureMails();
    kit.defer(mail.close);
    const { project } = await kit.scriptedProject(textReply("the page is written"), {
      config: {
        deliveries: { smtp: { host: "127.0.0.1", port: mail.port, secure: false, require_tls: false } },
      },
    });
    writeAgents(project, hook.url);
    const first = await kit.daemon(project.configFile);
    const run = await startRun(first, "writer", "write the page");
    await waitForRunEnd(first, run);
    const [follower] = await waitFor(async () => {
      const found = await listRuns(first, "?agent=checker");
      return found.length > 0 && found;
    }, "the checker's run");
    await waitForRunEnd(first, follower?.id ?? "");
    await waitFor(async () => {
      const made = await deliveriesOf(first, run);
      return made.length === 2 && made.every((delivery) => delivery.status === "sent") ? true : undefined;
    }, "both deliveries sent");
    // Killed once the attempts are on disk: a sent delivery not yet written as sent is resumed
    // at the next start (a second send with the same webhook-id, as docs/deliveries.md says).
    const kept = path.join(project.dataDirectory, "deliveries.json");
    await waitFor(
      () => existsSync(kept) && readFileSync(kept, "utf8").split('"status":"sent"').length === 3,
      "both deliveries kept as sent",
    );
    await first.kill();

    const second = await kit.daemon(project.configFile);
    expect(await deliveriesOf(second, run)).toHaveLength(2);
    expect(await listRuns(second, "?agent=checker")).toHaveLength(1);
    expect(hook.received).toHaveLength(1);
    expect(mail.mails).toHaveLength(1);
  });

  it("starts the failed follower of a run a kill -9 cut off, once it is marked crashed", async () => {
    const { llm, project } = await kit.scriptedProject({ type: "hang" });
    project.writeAgent("writer", {});
    project.writeAgent("medic", {
      triggers: [{ after: { agent: "writer", status: ["failed"] }, task: "Look at {{upstream.id}}" }],
    });
    const first = await kit.daemon(project.configFile);
    const run = await startRun(first, "writer", "write the page");
    await llm.waitForChatRequests(1);
    await first.kill();

    llm.setDefaultReply(textReply("looked"));
    const second = await kit.daemon(project.configFile);
    expect(await getRun(second, run)).toMatchObject({ status: "failed", reason: "crashed" });
    const followers = await listRuns(second, "?agent=medic");
    expect(followers.map((follower) => follower.task)).toEqual([`Look at ${run}`]);
  });
});
