import type pg from "pg";
import { AgentdError } from "../../errors/agentd-error.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { RunListQuery } from "../../runs/run-filter.js";
import { MAX_RUN_LIST_LIMIT } from "../../runs/run-records.js";
import { parseRunRecord } from "./run-record-text.js";

/** A row of `agentd_runs` read back: its record and the node that wrote it last. */
export interface StoredRun {
  record: RunRecord;
  node: string;
}

/**
 * Reads one page through the index that matches its filter (migration 7): the cost is the page,
 * not the history. A cursor naming a run the table no longer holds (pruned) goes on from the time
 * its id carries; one that is not a run id of agentd's making is NOT_FOUND.
 */
export async function readRunPage(pool: Pick<pg.Pool, "query">, query: RunListQuery): Promise<StoredRun[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const parameter = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (query.before !== undefined) {
    const cursor = await pool.query<{ created_at: string }>(
      "SELECT created_at FROM agentd_runs WHERE id = $1",
      [query.before],
    );
    const createdAt = cursor.rows[0]?.created_at ?? createdAtOfRunId(query.before);
    if (createdAt === undefined) {
      throw new AgentdError("NOT_FOUND", `no run "${query.before}" to list the runs before`, {
        field: "before",
        hint: "pass the id of the last run of the page before, as GET /runs returned it",
      });
    }
    conditions.push(`(created_at, id) < (${parameter(createdAt)}, ${parameter(query.before)})`);
  }
  if (query.agent !== undefined) conditions.push(`agent = ${parameter(query.agent)}`);
  if (query.status !== undefined) conditions.push(`status = ${parameter(query.status)}`);
  if (query.parent !== undefined) conditions.push(`parent_run = ${parameter(query.parent)}`);
  if (query.since !== undefined) conditions.push(`created_at >= ${parameter(query.since.toISOString())}`);
  const limit = Math.max(0, Math.min(MAX_RUN_LIST_LIMIT, Math.floor(query.limit)));
  const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
  const result = await pool.query<{ record: unknown; node: string }>(
    `SELECT record, node FROM agentd_runs ${where} ORDER BY created_at DESC, id DESC LIMIT ${parameter(limit)}`,
    values,
  );
  return result.rows.flatMap((row) => {
    const record = parseRunRecord(row.record);
    return record === undefined ? [] : [{ record, node: row.node }];
  });
}

/** A run id is `r_` + 9 base-36 characters of its creation time in milliseconds + 12 more (see run-id.ts). */
const RUN_ID_TIME = /^r_([0-9a-z]{9})[0-9a-z]{12}$/;

/** The creation time a run id carries, as `created_at` is written; undefined for another shape. */
function createdAtOfRunId(id: string): string | undefined {
  const time = RUN_ID_TIME.exec(id)?.[1];
  if (time === undefined) return undefined;
  const date = new Date(Number.parseInt(time, 36));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
