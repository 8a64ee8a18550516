import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresWriter } from "../../src/store/postgres/postgres-writer.js";
import type { WriteOperation } from "../../src/store/postgres/write-operation.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";

const missing = postgresMissingReason();
const logger = createLogger({ level: "silent", pretty: false });
const NODE = "node-report";

/**
 * A `skipped` or `missed` report and the settling of the fire claims it accounts for are queued
 * one right after the other; they must commit in one transaction, or a crash between two batches
 * leaves a report whose fires are still unsettled (the sweep reports them again: counted twice).
 * Real PostgreSQL, the real writer; what is checked is which batch each change committed in.
 */
describe.skipIf(missing !== undefined)("a report and the fires it settles", { timeout: 60_000 }, () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: await postgres.createDatabase("report_settles") });
    await migrate(pool);
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  function writer() {
    const batches: WriteOperation[][] = [];
    const writing = new PostgresWriter({
      pool,
      node: NODE,
      logger,
      onSettled: (batch, change) => {
        if (change !== undefined) batches.push(batch);
      },
    });
    return { writing, batches };
  }

  async function claim(agent: string, scheduledFor: string): Promise<void> {
    await pool.query(
      "INSERT INTO agentd_schedule_fires (agent, scheduled_for, node, settled) VALUES ($1, $2, $3, false)",
      [agent, scheduledFor, NODE],
    );
  }

  function report(agent: string, scheduledFor: string): WriteOperation[] {
    return [
      {
        kind: "event",
        draft: {
          agent,
          run: null,
          type: "missed",
          data: { scheduled_for: scheduledFor, on_missed: "skip", count: 1 },
          time: new Date().toISOString(),
        },
      },
      { kind: "fires_settled", agent, scheduledFor: [scheduledFor] },
    ];
  }

  /**
   * Queues `before` other changes, then the report of the fire at `at` and its settling, one right
   * after the other as the scheduler does; true once written if the two committed in one batch.
   */
  async function reportedTogether(agent: string, at: string, before: number): Promise<boolean> {
    const { writing, batches } = writer();
    await claim(agent, at);
    for (let index = 0; index < before; index++)
      writing.enqueue({
        kind: "event",
        draft: { agent: "busy", run: null, type: "thought", data: { text: `${index}` }, time: at },
      });
    const [event, settled] = report(agent, at) as [WriteOperation, WriteOperation];
    writing.enqueue(event);
    writing.enqueue(settled);
    await writing.flushed(30_000);
    const batchOf = (wanted: WriteOperation) => batches.findIndex((batch) => batch.includes(wanted));
    return batchOf(event) >= 0 && batchOf(settled) === batchOf(event);
  }

  it("commits them together when queued to an idle writer", async () => {
    expect(await reportedTogether("idle", "2026-01-01T00:00:00.000Z", 0)).toBe(true);
    const row = await pool.query<{ settled: boolean }>(
      "SELECT settled FROM agentd_schedule_fires WHERE agent = 'idle'",
    );
    expect(row.rows[0]?.settled).toBe(true);
  });

  // A backlog of 499 changes cuts the first batch (500) right after the report's event; one of 500
  // cuts the batch after it, queued while the first was written, at the same place.
  it.each([499, 500])(
    "commits them together when a batch would be cut between them (%i changes before)",
    async (before) => {
      expect(await reportedTogether(`cut-${before}`, "2026-01-01T00:01:00.000Z", before)).toBe(true);
    },
  );
});
