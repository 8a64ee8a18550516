import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store/postgres/migrations.js";
import { writeBatch } from "../../src/store/postgres/write-batch.js";
import type { WriteOperation } from "../../src/store/postgres/write-operation.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";

const missing = postgresMissingReason();

function event(agent: string, time: string): WriteOperation {
  return {
    kind: "event",
    draft: { agent, run: null, type: "warning", data: { code: "INTERNAL", message: "m" }, time },
  };
}

/** Two nodes whose clocks disagree write one agent's events: its times never go backwards. */
describe.skipIf(missing !== undefined)("event times on PostgreSQL", { timeout: 120_000 }, () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.url });
    await migrate(pool);
  }, 90_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  it("gives an event written by a node with a clock behind the agent's last time", async () => {
    const client = await pool.connect();
    try {
      await writeBatch(client, "ahead", [event("alpha", "2026-03-01T10:00:30.000Z")]);
      await writeBatch(client, "behind", [
        event("alpha", "2026-03-01T10:00:00.000Z"),
        event("beta", "2026-03-01T10:00:00.000Z"),
        event("alpha", "2026-03-01T10:00:31.000Z"),
      ]);
    } finally {
      client.release();
    }
    const rows = await pool.query<{ agent: string; id: string; line: string }>(
      "SELECT agent, id, line FROM agentd_events ORDER BY agent, id",
    );
    const times = rows.rows.map(
      (row) => `${row.agent}#${row.id} ${(JSON.parse(row.line) as { time: string }).time}`,
    );
    expect(times).toEqual([
      "alpha#1 2026-03-01T10:00:30.000Z",
      "alpha#2 2026-03-01T10:00:30.000Z",
      "alpha#3 2026-03-01T10:00:31.000Z",
      "beta#1 2026-03-01T10:00:00.000Z",
    ]);
  });
});
