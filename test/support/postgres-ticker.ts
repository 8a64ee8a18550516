import type pg from "pg";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { TempProject } from "./temp-project.js";

/** A `missed` event's data: the fires a report counts up to `scheduled_for`, and its catch-up run. */
export interface MissedData {
  scheduled_for: string;
  on_missed: string;
  count: number;
  run?: string;
}

/** Config values of a node that runs `ticker`'s one-second fires without turning any away. */
export const TICKER_CONFIG = { scheduler: { queue_limit: 1_000 }, concurrency: 20 };

/** Writes `ticker`: a one-second cron whose fires queue up, and one catch-up run for fires missed. */
export function writeTicker(project: TempProject): void {
  project.writeAgent("ticker", {
    schedule: { cron: "* * * * * *", task: "tick", overlap: "queue", on_missed: "run_once" },
    limits: { max_concurrent_runs: 50 },
  });
}

/** Every run of `ticker` in the database, of every node. */
export async function tickerRuns(database: Pick<pg.Pool, "query">): Promise<RunRecord[]> {
  const rows = await database.query<{ record: string }>(
    "SELECT record FROM agentd_runs WHERE agent = 'ticker'",
  );
  return rows.rows.map((row) => JSON.parse(row.record) as RunRecord);
}

/** Every `missed` report of `ticker` in the database, in id order. */
export async function tickerMissedReports(database: Pick<pg.Pool, "query">): Promise<MissedData[]> {
  const rows = await database.query<{ line: string }>(
    "SELECT line FROM agentd_events WHERE agent = 'ticker' ORDER BY id",
  );
  return rows.rows
    .map((row) => JSON.parse(row.line) as { type: string; data: MissedData })
    .filter((event) => event.type === "missed")
    .map((event) => event.data);
}
