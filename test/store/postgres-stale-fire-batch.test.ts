import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord, RunTrigger } from "../../src/run-vocabulary/run-record.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresWriter } from "../../src/store/postgres/postgres-writer.js";
import { queuedRecord } from "../runs/queued-record.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";

const missing = postgresMissingReason();
const logger = createLogger({ level: "silent", pretty: false });
const NODE = "node-woken";

/**
 * docs/scale-out.md: a new run of a fire another node took over is not written, and its caller is
 * refused. Only that run: the other new runs that commit in the same batch (an API run, the run
 * of a fire still this node's) are written, and that fire's claim is settled with its run.
 */
describe.skipIf(missing !== undefined)(
  "a batch with the run of a fire taken over",
  { timeout: 60_000 },
  () => {
    let postgres: PostgresServer;
    let pool: pg.Pool;

    beforeAll(async () => {
      postgres = await startPostgres();
      pool = new pg.Pool({ connectionString: await postgres.createDatabase("stale_fire_batch") });
      await migrate(pool);
    }, 60_000);

    afterAll(async () => {
      await pool?.end();
      await postgres?.stop();
    });

    function runOf(id: string, agent: string, trigger: RunTrigger): RunRecord {
      return { ...queuedRecord(id, agent, "2026-03-01T10:00:00.000Z"), trigger };
    }

    it("refuses the taken-over fire's run alone", async () => {
      const taken = "2026-03-01T10:00:00.000Z";
      const own = "2026-03-01T10:05:00.000Z";
      await pool.query(
        `INSERT INTO agentd_schedule_fires (agent, scheduled_for, node, settled)
       VALUES ('ticker', $1, 'node-other', false), ('ticker', $2, $3, false)`,
        [taken, own, NODE],
      );
      const writer = new PostgresWriter({ pool, node: NODE, logger, onSettled: () => undefined });
      // One synchronous step: one batch.
      const outcomes = await Promise.allSettled([
        writer.write({
          kind: "run",
          record: runOf("r_taken", "ticker", { kind: "schedule", scheduled_for: taken }),
          claimable: true,
        }),
        writer.write({ kind: "run", record: runOf("r_api", "ticker", { kind: "api" }), claimable: true }),
        writer.write({
          kind: "run",
          record: runOf("r_own", "ticker", { kind: "schedule", scheduled_for: own }),
          claimable: true,
        }),
      ]);

      expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
      const refusal = (outcomes[0] as PromiseRejectedResult).reason as unknown;
      expect(AgentdError.is(refusal, "STORE_WRITE_FAILED")).toBe(true);
      const runs = await pool.query<{ id: string }>("SELECT id FROM agentd_runs ORDER BY id");
      expect(runs.rows.map((row) => row.id)).toEqual(["r_api", "r_own"]);
      const fires = await pool.query<{ scheduled_for: string; node: string; settled: boolean }>(
        "SELECT scheduled_for, node, settled FROM agentd_schedule_fires ORDER BY scheduled_for",
      );
      expect(fires.rows).toEqual([
        { scheduled_for: taken, node: "node-other", settled: false },
        { scheduled_for: own, node: NODE, settled: true },
      ]);
    });
  },
);
