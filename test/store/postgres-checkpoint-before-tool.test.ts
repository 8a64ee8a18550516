import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

/**
 * "A tool call is never run again" rests on the checkpoint that records the call being committed
 * before the call runs. The test holds the checkpoints table locked, so the daemon's write of the
 * round's checkpoint cannot commit, and looks at the tool's side effect meanwhile.
 */
describe.skipIf(missing !== undefined)("checkpoints on PostgreSQL", { timeout: 120_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let locker: pg.Client;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 1,
      reply: (request) => {
        const done = (request.body?.messages ?? []).some((message) => message.role === "tool");
        return done
          ? textReply("written")
          : toolCallReply({ name: "write_file", arguments: { path: "marker.txt", content: "ran" } });
      },
      agents: (project) => {
        mkdirSync(path.join(project.root, "work"));
        project.writeAgent("writer", {
          workdir: "work",
          tools: ["write_file"],
          permissions: { allow: ["write_file"] },
          resume: true,
        });
      },
    });
    locker = new pg.Client({ connectionString: cluster.postgres.url });
    await locker.connect();
  }, 90_000);

  afterAll(async () => {
    await locker?.end();
  });

  it("runs a tool call only once the checkpoint that records it is committed", async () => {
    const node = cluster.nodes[0] as DaemonProcess;
    const marker = path.join(cluster.projects[0]?.root ?? "", "work", "marker.txt");
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE agentd_checkpoints IN SHARE MODE");
    const run = await startRun(node, "writer", "write the marker");
    // The model asked for the call, and the daemon's write is stuck behind the lock.
    await cluster.llm.waitForChatRequests(1);
    await waitFor(async () => {
      const waiting = await locker.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      );
      return (waiting.rows[0] as { n: number }).n > 0 ? true : undefined;
    }, "the daemon's checkpoint write to wait for the lock");
    // Without the commit the call must not run: give it ample time to run if it would.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(marker)).toBe(false);

    await locker.query("COMMIT");
    await waitFor(async () => {
      const record = await getRun(node, run);
      return record.status === "completed" ? record : undefined;
    }, `run ${run} to complete`);
    expect(existsSync(marker)).toBe(true);
  });
});
