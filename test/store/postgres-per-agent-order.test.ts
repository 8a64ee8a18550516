import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { ChangeFeed } from "../../src/store/postgres/change-feed.js";
import { loadSnapshot } from "../../src/store/postgres/load-snapshot.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresRunQueue } from "../../src/store/postgres/postgres-run-queue.js";
import type { PostgresRunRecords } from "../../src/store/postgres/postgres-run-records.js";
import { writeBatch } from "../../src/store/postgres/write-batch.js";
import type { WriteOperation } from "../../src/store/postgres/write-operation.js";
import { queuedRecord } from "../runs/queued-record.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { heldAtCommit } from "../support/held-at-commit.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });
const missing = postgresMissingReason();

function event(agent: string, index: number, run: string | null = null): WriteOperation {
  return {
    kind: "event",
    draft: {
      agent,
      run,
      type: "warning",
      data: { code: "INTERNAL", message: `event ${index}` },
      time: "2026-03-01T10:00:00.000Z",
    },
  };
}

function runWrite(id: string, agent: string): WriteOperation {
  const record: RunRecord = queuedRecord(id, agent, "2026-03-01T10:00:00.000Z");
  return { kind: "run", record };
}

/** Whether the backend `pid` waits on a lock now (pg_stat_activity). */
async function waitsOnLock(pool: pg.Pool, pid: number): Promise<boolean> {
  const result = await pool.query<{ wait_event_type: string | null }>(
    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1",
    [pid],
  );
  return result.rows[0]?.wait_event_type === "Lock";
}

function pidOf(client: pg.PoolClient): number {
  return (client as unknown as { processID: number }).processID;
}

/**
 * No cluster-wide write lock: an agent's events are ordered by its own counter row, and a node
 * following an agent from another node still sees every event in order with no gap, however the
 * writers' commits interleave.
 */
describe.skipIf(missing !== undefined)("per-agent event order on PostgreSQL", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.url, max: 12 });
    await migrate(pool);
  }, 90_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  it("lets another agent's writer commit while one agent's writer is held in its transaction", async () => {
    const first = await pool.connect();
    const second = await pool.connect();
    const third = await pool.connect();
    try {
      const held = heldAtCommit(first);
      const holding = writeBatch(held.client, "node-a", [
        runWrite("r_alpha", "alpha"),
        event("alpha", 1, "r_alpha"),
      ]);
      await held.atCommit;
      // Another agent, another node: written and committed while alpha's writer holds its locks.
      const other = await writeBatch(second, "node-b", [
        runWrite("r_beta", "beta"),
        event("beta", 1, "r_beta"),
      ]);
      expect(other.refused).toEqual([]);
      // A writer of the same agent does wait, on alpha's counter row alone.
      const sameAgent = writeBatch(third, "node-c", [event("alpha", 2)]);
      await waitFor(() => waitsOnLock(pool, pidOf(third)), "the second alpha writer to wait on a lock");
      held.release();
      await holding;
      await sameAgent;
      const rows = await pool.query<{ agent: string; id: string; line: string }>(
        "SELECT agent, id, line FROM agentd_events ORDER BY agent, id",
      );
      expect(
        rows.rows.map(
          (row) =>
            `${row.agent}#${row.id} ${(JSON.parse(row.line) as AgentEvent & { data: { message: string } }).data.message}`,
        ),
      ).toEqual(["alpha#1 event 1", "alpha#2 event 2", "beta#1 event 1"]);
      const locks = await pool.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory'",
      );
      expect(locks.rows[0]?.count).toBe(0);
    } finally {
      first.release();
      second.release();
      third.release();
    }
  });

  it("numbers a requeue after a write of the same run another node committed while it waited", async () => {
    const ended: RunRecord = {
      ...queuedRecord("r_requeued", "delta", "2026-03-01T10:00:00.000Z"),
      status: "failed",
      reason: "crashed",
      ended_at: "2026-03-01T10:01:00.000Z",
    };
    const setup = await pool.connect();
    try {
      await writeBatch(setup, "node-b", [{ kind: "run", record: ended }]);
    } finally {
      setup.release();
    }
    await pool.query("INSERT INTO agentd_checkpoints (run, checkpoint) VALUES ($1, $2)", [
      "r_requeued",
      JSON.stringify({
        run: "r_requeued",
        round: 1,
        messages: [],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        cost_usd: 0,
        removed_tools: [],
        recent_calls: [],
        saved_at: "2026-03-01T10:00:30.000Z",
      }),
    ]);
    const written: string[] = [];
    const queue = new PostgresRunQueue({
      pool,
      // Only what requeue tells the records: the change its write committed with.
      runs: {
        written: (_record: RunRecord, change: string) => written.push(change),
      } as unknown as PostgresRunRecords,
      node: "node-a",
      logger,
      committed: () => Promise.resolve(),
    });
    // Another node writes the run (same status and end: the requeue's condition still holds):
    // it holds the row when the requeue starts, and takes its change number after the requeue did.
    const other = await pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT id FROM agentd_runs WHERE id = 'r_requeued' FOR UPDATE");
      const requeued = queue.requeue(queuedRecord("r_requeued", "delta", ended.created_at), ended);
      await waitFor(async () => {
        const waiting = await pool.query<{ count: number }>(
          "SELECT count(*)::int AS count FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%agentd_runs%'",
        );
        return (waiting.rows[0]?.count ?? 0) > 0;
      }, "the requeue to wait on the run's row");
      const theirs = await other.query<{ change: string }>(
        "SELECT nextval('agentd_changes')::text AS change",
      );
      const theirChange = BigInt(theirs.rows[0]?.change ?? "0");
      await other.query("UPDATE agentd_runs SET change = $1, node = 'node-b' WHERE id = 'r_requeued'", [
        theirChange.toString(),
      ]);
      await other.query("COMMIT");
      expect(await requeued).toBeDefined();
      const row = await pool.query<{ change: string; status: string }>(
        "SELECT change::text AS change, status FROM agentd_runs WHERE id = 'r_requeued'",
      );
      expect(row.rows[0]?.status).toBe("queued");
      // The later write carries the higher number: a node holding the other write (with its
      // number) takes the requeued record from the feed instead of keeping its stale copy.
      expect(BigInt(row.rows[0]?.change ?? "0")).toBeGreaterThan(theirChange);
      expect(written).toEqual([row.rows[0]?.change]);
    } finally {
      other.release();
      queue.close();
    }
  });

  it("claims queued runs in the order the database took them, not by the posting nodes' clocks", async () => {
    await pool.query(
      "INSERT INTO agentd_nodes (id, name, lease_until) VALUES ('node-q', 'q', now() + interval '1 hour')",
    );
    const client = await pool.connect();
    try {
      // Posted first by a node whose clock is ahead, then by one whose clock is behind.
      for (const [id, createdAt] of [
        ["r_firstposted", "2026-03-01T10:00:05.000Z"],
        ["r_secondposted", "2026-03-01T10:00:00.000Z"],
      ] as const)
        await writeBatch(client, "node-q", [
          { kind: "run", record: queuedRecord(id, "epsilon", createdAt), claimable: true },
        ]);
    } finally {
      client.release();
    }
    const queue = new PostgresRunQueue({
      pool,
      runs: {} as PostgresRunRecords,
      node: "node-q",
      logger,
      committed: () => Promise.resolve(),
    });
    const only = (agent: string) => (agent === "epsilon" ? 5 : 0);
    expect((await queue.claim(1, only)).map(({ record }) => record.id)).toEqual(["r_firstposted"]);
    expect((await queue.claim(1, only)).map(({ record }) => record.id)).toEqual(["r_secondposted"]);
    queue.close();
  });

  it("has a follower on another node see every event and every run, in order, when commits land out of order", async () => {
    const database = await postgres.createDatabase("follower");
    const nodePool = new pg.Pool({ connectionString: database, max: 12 });
    await migrate(nodePool);
    const snapshot = await loadSnapshot(nodePool, 200);
    const seen: AgentEvent[] = [];
    const runs: string[] = [];
    const feed = new ChangeFeed({
      url: database,
      pool: nodePool,
      node: "follower",
      logger,
      snapshot: snapshot.snapshot,
      eventCursors: new Map(snapshot.logs.map((log) => [log.agent, log.lastId])),
      onRun: (record) => runs.push(record.id),
      onEvent: (agentEvent) => seen.push(agentEvent),
      onCooldown: () => undefined,
      onControl: () => undefined,
      onQueue: () => undefined,
      onConnection: () => undefined,
    });
    await feed.start();
    const slow = await nodePool.connect();
    const fast = await nodePool.connect();
    try {
      // The slow writer takes its change number first and commits last: the feed reads the fast
      // one's run and events in between, and must still read the slow one's when it lands.
      const held = heldAtCommit(slow);
      const holding = writeBatch(held.client, "node-a", [
        runWrite("r_slow", "alpha"),
        event("alpha", 1, "r_slow"),
      ]);
      await held.atCommit;
      await writeBatch(fast, "node-b", [runWrite("r_fast", "beta"), event("beta", 1, "r_fast")]);
      feed.read(["beta"]);
      await waitFor(() => runs.includes("r_fast") && seen.some((e) => e.agent === "beta"), "the fast write");
      expect(runs).not.toContain("r_slow");
      held.release();
      await holding;
      await waitFor(() => runs.includes("r_slow") && seen.some((e) => e.agent === "alpha"), "the slow write");

      // Many writers of three agents at once, from separate connections (nodes): each agent's ids
      // arrive 1..n in order, none missing, none twice.
      const writers = Array.from({ length: 6 }, (_, writer) =>
        (async () => {
          const client = await nodePool.connect();
          try {
            for (let round = 0; round < 15; round += 1) {
              const agents = ["alpha", "beta", "gamma"];
              await writeBatch(client, `node-${writer}`, [
                event(agents[(writer + round) % 3] ?? "alpha", round),
                event(agents[(writer + round + 1) % 3] ?? "alpha", round),
              ]);
            }
          } finally {
            client.release();
          }
        })(),
      );
      await Promise.all(writers);
      const counters = await nodePool.query<{ agent: string; last_id: string }>(
        "SELECT agent, last_id FROM agentd_event_counters ORDER BY agent",
      );
      const expected = new Map(counters.rows.map((row) => [row.agent, Number(row.last_id)]));
      await waitFor(
        () => [...expected].every(([agent, last]) => seen.filter((e) => e.agent === agent).length === last),
        "every event at the follower",
      );
      for (const [agent, last] of expected)
        expect(seen.filter((e) => e.agent === agent).map((e) => e.id)).toEqual(
          Array.from({ length: last }, (_, index) => index + 1),
        );
    } finally {
      slow.release();
      fast.release();
      await feed.close();
      await nodePool.end();
    }
  });
});
