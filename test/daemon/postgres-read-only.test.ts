import pg from "pg";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentEvents, getRun, startRun, waitForRunEnd } from "./api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

async function healthOf(daemon: DaemonProcess): Promise<{ status: string; store: { connected: boolean } }> {
  return (await daemon.request("GET", "/health")).body as { status: string; store: { connected: boolean } };
}

/**
 * With the PostgreSQL store a full disk is the database's: PostgreSQL refuses writes (disk_full
 * 53100, or read_only_sql_transaction 25006 on a database made read-only, the same path in the
 * writer). That is waited out like a lost connection (docs/durability.md): `/health` says
 * `store_unavailable`, new runs get 503, and everything goes on by itself once it takes writes again,
 * nothing reported lost, no id given twice, no run stuck. Made read-only here for the whole server
 * (`default_transaction_read_only` in its config, reloaded): a full disk cannot be had on demand.
 */
describe.skipIf(missing !== undefined)(
  "a PostgreSQL database that refuses writes",
  { timeout: 120_000 },
  () => {
    const kit = useTestKit();

    it("is store_unavailable with 503 for new runs, then ok by itself, nothing lost or repeated", async () => {
      const { postgres, nodes } = await startPostgresCluster(kit, {
        nodes: 1,
        reply: (request) =>
          JSON.stringify(request.body?.messages ?? []).includes("slowly")
            ? textReply("done", { delayBeforeFirstChunkMs: 1_500 })
            : textReply("done"),
        agents: (project) => project.writeAgent("worker", { limits: { max_concurrent_runs: 5 } }),
      });
      const [daemon] = nodes as [DaemonProcess];
      const admin = new pg.Client({ connectionString: postgres.url });
      await admin.connect();
      kit.defer(() => admin.end());
      const readOnly = async (on: boolean) => {
        await admin.query(
          on
            ? "ALTER SYSTEM SET default_transaction_read_only = on"
            : "ALTER SYSTEM RESET default_transaction_read_only",
        );
        await admin.query("SELECT pg_reload_conf()");
      };

      await waitForRunEnd(daemon, await startRun(daemon, "worker", "before"));
      const inFlight = await startRun(daemon, "worker", "answer slowly");
      await waitFor(
        async () => ((await getRun(daemon, inFlight)).status === "running" ? true : undefined),
        "running",
      );
      await readOnly(true);

      // The run's next writes are refused: the store is unavailable, new runs are turned away.
      const down = await waitFor(async () => {
        const health = await healthOf(daemon);
        return health.store.connected ? undefined : health;
      }, "health to report the store unavailable");
      expect(down.status).toBe("store_unavailable");
      const refused = await daemon.request("POST", "/agents/worker/runs", { task: "while read-only" });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: { code: "STORE_UNAVAILABLE" } });
      const reported = await agentEvents(daemon, "worker");

      await readOnly(false);
      await waitFor(
        async () => ((await healthOf(daemon)).status === "ok" ? true : undefined),
        "health ok again",
      );
      expect(await waitForRunEnd(daemon, inFlight)).toMatchObject({ status: "completed" });
      const after = await startRun(daemon, "worker", "after");
      expect(await waitForRunEnd(daemon, after)).toMatchObject({ status: "completed" });

      // Every event reported before is still there, unchanged; ids increase, none given twice; in the database too.
      const events: AgentEvent[] = await agentEvents(daemon, "worker");
      for (const event of reported) expect(events).toContainEqual(event);
      const ids = events.map((event) => event.id);
      expect(ids).toEqual([...ids].sort((left, right) => left - right));
      expect(new Set(ids).size).toBe(ids.length);
      const stored = await admin.query<{ status: string }>(
        "SELECT status FROM agentd_runs WHERE id = ANY($1::text[]) ORDER BY status",
        [[inFlight, after]],
      );
      expect(stored.rows.map((row) => row.status)).toEqual(["completed", "completed"]);
      const unfinished = await admin.query(
        "SELECT id FROM agentd_runs WHERE status IN ('queued', 'running')",
      );
      expect(unfinished.rows).toEqual([]);
    });
  },
);
