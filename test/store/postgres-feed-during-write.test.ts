import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresRunRecords } from "../../src/store/postgres/postgres-run-records.js";
import { PostgresWriter } from "../../src/store/postgres/postgres-writer.js";
import { queuedRecord } from "../runs/queued-record.js";
import { heldAtCommit } from "../support/held-at-commit.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";

const logger = createLogger({ level: "silent", pretty: false });
const missing = postgresMissingReason();

/**
 * What a node serves of a run while its own write of the run and another node's newer write of it
 * arrive in either order. On a busy event loop the change feed's read can bring the claiming node's
 * `running` before this node's write of the posted run has settled; the feed never reads a change
 * twice, so a record set aside then must still be served once the write settles.
 */
describe.skipIf(missing !== undefined)(
  "a run's record arriving from the feed during this node's write",
  () => {
    let postgres: PostgresServer;
    let pool: pg.Pool;

    beforeAll(async () => {
      postgres = await startPostgres();
      pool = new pg.Pool({ connectionString: await postgres.createDatabase("feed_during_write"), max: 6 });
      await migrate(pool);
    }, 90_000);

    afterAll(async () => {
      await pool?.end();
      await postgres?.stop();
    });

    /** node-a's run records, its writer's next transaction held just before COMMIT. */
    async function nodeAHeldAtCommit(): Promise<{
      records: PostgresRunRecords;
      atCommit: Promise<void>;
      release: () => void;
    }> {
      const client = await pool.connect();
      const held = heldAtCommit(client);
      let handedOut = false;
      const writerPool = {
        connect: async () => {
          if (handedOut) return pool.connect();
          handedOut = true;
          return held.client;
        },
      } as unknown as pg.Pool;
      // The writer reports to the records made with it.
      const reportTo: { records?: PostgresRunRecords } = {};
      const writer = new PostgresWriter({
        pool: writerPool,
        node: "node-a",
        logger,
        onSettled: (batch, change, refused) => reportTo.records?.settled(batch, change, refused),
      });
      const records = new PostgresRunRecords({ writer, pool, node: "node-a" }, [], new Map());
      reportTo.records = records;
      return { records, atCommit: held.atCommit, release: held.release };
    }

    /** A change number taken after every one taken so far, as another node's later write gets. */
    async function laterChange(): Promise<string> {
      const result = await pool.query<{ change: string }>("SELECT nextval('agentd_changes')::text AS change");
      return result.rows[0]?.change ?? "0";
    }

    function runningOn(node: string, queued: RunRecord): RunRecord {
      return { ...queued, status: "running", started_at: new Date().toISOString(), node };
    }

    it("serves the claiming node's running record, not the queued one it posted", async () => {
      const node = await nodeAHeldAtCommit();
      const queued = queuedRecord("r_posted_here", "alpha");
      const posting = node.records.create(queued, true);
      await node.atCommit;
      // node-b claimed the run and wrote it running; the feed brings that before the post settles.
      node.records.applyRemote(runningOn("node-b", queued), "node-b", await laterChange());
      node.release();
      await posting;
      expect(node.records.get(queued.id)).toMatchObject({ status: "running", node: "node-b" });
      expect(node.records.nodeOf(queued.id)).toBe("node-b");
    });

    it("keeps the newer of a refused write's stored record and one the feed brought meanwhile", async () => {
      const claimed = queuedRecord("r_claimed_elsewhere", "alpha");
      const stored = await laterChange();
      await pool.query(
        `INSERT INTO agentd_runs (id, agent, node, status, created_at, record, change, claimed_by)
       VALUES ($1, $2, 'node-b', 'queued', $3, $4, $5, 'node-b')`,
        [claimed.id, claimed.agent, claimed.created_at, JSON.stringify(claimed), stored],
      );
      const node = await nodeAHeldAtCommit();
      // node-a writes a run node-b holds: refused, with the record the database keeps.
      node.records.save({
        ...claimed,
        status: "failed",
        reason: "crashed",
        ended_at: new Date().toISOString(),
      });
      await node.atCommit;
      node.records.applyRemote(runningOn("node-b", claimed), "node-b", await laterChange());
      node.release();
      await expect.poll(() => node.records.get(claimed.id)?.status).toBe("running");
      expect(node.records.nodeOf(claimed.id)).toBe("node-b");
    });

    it("keeps this node's committed write when the record the feed brought meanwhile is older", async () => {
      const node = await nodeAHeldAtCommit();
      const queued = queuedRecord("r_old_remote", "alpha");
      const older = await laterChange();
      const posting = node.records.create(queued, true);
      await node.atCommit;
      // A change number taken before this node's write took its own: an older record.
      node.records.applyRemote(runningOn("node-b", queued), "node-b", older);
      node.release();
      await posting;
      expect(node.records.get(queued.id)).toMatchObject({ status: "queued" });
    });

    it("serves a run's ending record from its status event on, even one read back before its write settled", async () => {
      const node = await nodeAHeldAtCommit();
      const queued = queuedRecord("r_ended_here", "alpha");
      await pool.query(
        `INSERT INTO agentd_runs (id, agent, node, status, created_at, record, change, claimed_by)
       VALUES ($1, $2, 'node-a', 'running', $3, $4, $5, 'node-a')`,
        [
          queued.id,
          queued.agent,
          queued.created_at,
          JSON.stringify(runningOn("node-a", queued)),
          await laterChange(),
        ],
      );
      const completed: RunRecord = {
        ...runningOn("node-a", queued),
        status: "completed",
        ended_at: new Date().toISOString(),
        result: "done",
      };
      node.records.save(completed);
      node.records.endPublished(queued.id, "completed");
      await node.atCommit;
      // The feed read the ending status event back: a listener of it reads the run's record now.
      node.records.endTold(queued.id, "completed");
      expect(node.records.get(queued.id)).toMatchObject({ status: "completed", result: "done" });
      node.release();
      await expect.poll(() => node.records.unwritten(queued.id)).toBeUndefined();
      expect(node.records.get(queued.id)).toMatchObject({ status: "completed" });
    });
  },
);
