import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const missing = postgresMissingReason();

interface AgentRow {
  enabled: boolean;
  next_fire: string | null;
  switched_off: { by: string; at: string } | null;
}

/** `agentd disable` on one node of a cluster holds on every node: two real daemons, one PostgreSQL. */
describe.skipIf(missing !== undefined)("agent switches on a cluster", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      reply: textReply("done"),
      agents: (project, index) => {
        project.writeAgent("ticker", { schedule: "0 9 * * *", task: "tick" });
        project.writeAgent("worker", { task: "work" });
        project.writeAgent("legacy", { task: "old" });
        // The second node's data_dir switched "legacy" off before the cluster: moved into the table.
        if (index === 1) {
          mkdirSync(project.dataDirectory, { recursive: true });
          const note = { by: "cli:before", at: "2026-01-01T00:00:00.000Z" };
          writeFileSync(
            path.join(project.dataDirectory, "agent-switches.json"),
            JSON.stringify({ disabled: { legacy: note } }),
          );
        }
      },
    });
    database = cluster.database;
  }, 120_000);

  // Before the kit's clean-up, with room for a loaded machine: the daemons stop here, and the
  // kit's 20 s is left for PostgreSQL and the model.
  afterAll(async () => {
    await Promise.all((cluster?.nodes ?? []).map((node) => node.kill()));
  }, 60_000);

  const agent = async (daemon: DaemonProcess, id: string) =>
    (await daemon.request("GET", `/agents/${id}`)).body as AgentRow;
  const startRun = (daemon: DaemonProcess, id: string) =>
    daemon.request("POST", `/agents/${id}/runs`, { task: "now" });

  it("turns an agent off on every node within seconds, and back on from any node", async () => {
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    expect((await agent(second, "ticker")).next_fire).not.toBeNull();

    const off = await first.request("POST", "/agents/ticker/disable");
    expect(off.body).toMatchObject({ enabled: false, switched_off: { by: "token:default" } });
    await first.request("POST", "/agents/worker/disable");
    const switchedAt = Date.now();
    // The other node drops the schedule and refuses API runs, with the note of who switched it off.
    const seen = await waitFor(async () => {
      const row = await agent(second, "ticker");
      return row.enabled ? undefined : row;
    }, "the second node to see ticker disabled");
    expect(Date.now() - switchedAt).toBeLessThan(5_000);
    expect(seen).toMatchObject({ next_fire: null, switched_off: { by: "token:default" } });
    await waitFor(
      async () => !(await agent(second, "worker")).enabled,
      "the second node to see worker disabled",
    );
    const refused = await startRun(second, "worker");
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: "AGENT_DISABLED" } });
    expect((await startRun(first, "worker")).status).toBe(409);

    // In the database, not in either data_dir.
    const rows = await database.query("SELECT agent FROM agentd_agent_switches ORDER BY agent");
    expect(rows.rows.map((row: { agent: string }) => row.agent)).toEqual(["legacy", "ticker", "worker"]);
    for (const project of cluster.projects) {
      expect(existsSync(path.join(project.dataDirectory, "agent-switches.json"))).toBe(false);
    }

    // Enabled on the other node: both take runs and schedule it again.
    const on = await second.request("POST", "/agents/worker/enable");
    expect(on.body).toMatchObject({ enabled: true, switched_off: null });
    await waitFor(async () => (await agent(first, "worker")).enabled, "the first node to see worker enabled");
    expect((await startRun(first, "worker")).status).toBe(202);
    await second.request("POST", "/agents/ticker/enable");
    await waitFor(async () => (await agent(first, "ticker")).next_fire !== null, "ticker's schedule back");
  });

  it("moves a switches file from before the cluster into the database once", async () => {
    const [first] = cluster.nodes as [DaemonProcess, DaemonProcess];
    const second = cluster.projects[1];
    expect(await agent(first, "legacy")).toMatchObject({
      enabled: false,
      switched_off: { by: "cli:before", at: "2026-01-01T00:00:00.000Z" },
    });
    expect(existsSync(path.join(second?.dataDirectory ?? "", "agent-switches.json.imported"))).toBe(true);
  });
});
