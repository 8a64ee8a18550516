import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { getRun, startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { type PostgresServer, postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

interface Health {
  status: string;
  node: string;
  store: { connected: boolean; pending_writes: number };
}

async function health(daemon: DaemonProcess): Promise<{ status: number; body: Health }> {
  const reply = await daemon.request("GET", "/health");
  return { status: reply.status, body: reply.body as Health };
}

/** What the API reports is in PostgreSQL; losing PostgreSQL pauses new work, not the runs in flight. */
describe.skipIf(missing !== undefined)("durability on PostgreSQL", { timeout: 240_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let postgres: PostgresServer;
  let nodes: DaemonProcess[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      reply: (request) => {
        const messages = JSON.stringify(request.body?.messages ?? []);
        if (messages.includes("hang forever")) return { type: "hang" };
        if (messages.includes("answer slowly")) return textReply("done", { delayBeforeFirstChunkMs: 2_000 });
        return textReply("done");
      },
      nodes: 2,
      agents: (project) => project.writeAgent("worker", { limits: { max_concurrent_runs: 10 } }),
    });
    ({ postgres, nodes } = cluster);
  }, 120_000);

  it("keeps running runs going while PostgreSQL is down, refuses new ones, and resumes when it is back", async () => {
    const [first, second] = nodes as [DaemonProcess, DaemonProcess];
    const inFlight = await startRun(first, "worker", "answer slowly");
    const started: RunRecord = await waitFor(async () => {
      const record = await getRun(first, inFlight);
      return record.status === "running" ? record : undefined;
    }, "the run to start");
    // While the database is away, only the node running it sees the run end.
    const owner = cluster.nodeWithId(started.node);
    await postgres.pause();
    for (const node of nodes) {
      const down = await waitFor(async () => {
        const reply = await health(node);
        return reply.body.store.connected ? undefined : reply;
      }, "health to report the store unavailable");
      expect(down.status).toBe(200);
      expect(down.body.status).toBe("store_unavailable");
    }
    const refused = await second.request("POST", "/agents/worker/runs", {
      task: "while the database is down",
    });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { code: "STORE_UNAVAILABLE" } });
    // The run in flight needs no store to finish: it ends while the database is away, its changes
    // waiting in memory; it is reported completed only once they are committed.
    await waitFor(
      async () => ((await health(owner)).body.store.pending_writes > 0 ? true : undefined),
      "the run in flight's changes to wait for the database",
    );
    expect((await getRun(owner, inFlight)).status).toBe("running");
    await postgres.resume();
    await waitFor(
      async () => ((await getRun(owner, inFlight)).status === "completed" ? true : undefined),
      "the run in flight reported completed once its end is committed",
    );
    for (const node of nodes) {
      await waitFor(async () => ((await health(node)).body.status === "ok" ? true : undefined), "health ok");
    }
    // Its end, written while the database was away, is there now; new runs are taken again.
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await waitFor(async () => {
        const row = await client.query<{ status: string }>("SELECT status FROM agentd_runs WHERE id = $1", [
          inFlight,
        ]);
        return row.rows[0]?.status === "completed" ? true : undefined;
      }, "the queued writes to reach PostgreSQL");
    } finally {
      await client.end();
    }
    const after = await startRun(second, "worker", "after the database came back");
    await waitFor(
      async () => ((await getRun(first, after)).status === "completed" ? true : undefined),
      "a new run to complete",
    );
  });

  it("has in PostgreSQL a pause the API reported, even when the node is killed right after", async () => {
    const run = await startRun(nodes[1] as DaemonProcess, "worker", "hang forever");
    const running: RunRecord = await waitFor(async () => {
      const record = await getRun(nodes[1] as DaemonProcess, run);
      return record.status === "running" ? record : undefined;
    }, "the run to start");
    const owner = cluster.nodeWithId(running.node);
    const paused = await owner.request("POST", `/runs/${run}/pause`);
    expect(paused.body).toMatchObject({ status: "paused" });
    await owner.kill();
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const row = await client.query<{ status: string }>("SELECT status FROM agentd_runs WHERE id = $1", [
        run,
      ]);
      expect(row.rows[0]?.status).toBe("paused");
    } finally {
      await client.end();
    }
  });
});
