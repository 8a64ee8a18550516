import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { listRuns, postRunWithKey } from "../daemon/api-shapes.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { postIdempotentRun } from "../../src/store/postgres/post-idempotent-run.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { postgresMissingReason } from "../support/postgres-server.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const missing = postgresMissingReason();

/** Idempotency-Key across two real daemons on one real PostgreSQL. */
describe.skipIf(missing !== undefined)("Idempotency-Key on a cluster", { timeout: 180_000 }, () => {
  const kit = useTestKit("file");
  let cluster: PostgresCluster;
  let database: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgresCluster(kit, {
      nodes: 2,
      reply: textReply("done"),
      agents: (project) => project.writeAgent("worker", { limits: { max_concurrent_runs: 20 } }),
    });
    database = cluster.database;
  }, 120_000);

  it("makes one run per key when two nodes get the same key at once", async () => {
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    const keys = Array.from({ length: 10 }, (_, index) => `race-${index}`);
    const replies = await Promise.all(
      keys.flatMap((key) => [postRunWithKey(first, "worker", key), postRunWithKey(second, "worker", key)]),
    );
    for (const key of keys) {
      const pair = replies.filter((_, index) => keys[Math.floor(index / 2)] === key);
      expect(pair.map((reply) => reply.status).sort(), key).toEqual([200, 202]);
      expect(pair[0]?.body.run, key).toBe(pair[1]?.body.run);
    }
    const rows = await database.query(
      "SELECT idempotency_key FROM agentd_runs WHERE idempotency_key LIKE 'race-%'",
    );
    expect(rows.rowCount).toBe(keys.length);
  });

  it("answers the run of a key after its node was killed", async () => {
    const [first, second] = cluster.nodes as [DaemonProcess, DaemonProcess];
    const posted = await postRunWithKey(first, "worker", "survivor");
    expect(posted.status).toBe(202);
    await first.kill();
    const again = await postRunWithKey(second, "worker", "survivor");
    expect(again).toMatchObject({ status: 200, body: { run: posted.body.run, duplicate: true } });
    const runs = await listRuns(second, "?agent=worker");
    expect(runs.filter((run) => run.idempotency_key === "survivor")).toHaveLength(1);
  });

  it("lets a key go once its run is 24 h old, by the database's clock", async () => {
    const url = await cluster.postgres.createDatabase("window");
    const pool = new pg.Pool({ connectionString: url });
    try {
      await migrate(pool);
      const record = (id: string): RunRecord => ({
        id,
        agent: "worker",
        task: "t",
        status: "queued",
        trigger: { kind: "api" },
        definition_hash: "h",
        created_at: new Date().toISOString(),
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        cost_usd: 0,
        idempotency_key: "daily",
      });
      const made = await postIdempotentRun(pool, "n1", record("r_1"));
      expect(made.change).toBeDefined();
      const same = await postIdempotentRun(pool, "n2", record("r_2"));
      expect(same).toEqual({ record: made.record });
      await pool.query(
        `UPDATE agentd_runs SET created_at = to_char((now() - interval '25 hours') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      );
      const next = await postIdempotentRun(pool, "n2", record("r_3"));
      expect(next.record.id).toBe("r_3");
      expect(next.change).toBeDefined();
      const keys = await pool.query("SELECT id, idempotency_key FROM agentd_runs ORDER BY id");
      expect(keys.rows).toEqual([
        { id: "r_1", idempotency_key: null },
        { id: "r_3", idempotency_key: "daily" },
      ]);
    } finally {
      await pool.end();
    }
  });
});
