import type pg from "pg";
import { AgentdError } from "../../errors/agentd-error.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { IDEMPOTENCY_WINDOW_MILLISECONDS } from "../../runs/queue/idempotent-starts.js";
import { isConnectionError } from "./connection-error.js";
import { parseRunRecord } from "./run-record-text.js";
import { takeChangeNumber } from "./write-batch.js";

/** SQLSTATE of a unique index refusing a row: another node inserted the same agent and key first. */
const UNIQUE_VIOLATION = "23505";

/** A run posted with an idempotency key: the record the cluster holds, and whether this call wrote it. */
export interface PostedRun {
  record: RunRecord;
  change?: string;
}

/**
 * Writes a new queued run posted with an `idempotency_key`, once per agent and key within the
 * window, in one transaction: the row of a run of the same agent and key made within the window
 * (by the database's clock) is answered instead; an older one lets go of its key; then the insert,
 * which the unique index on (agent, idempotency_key) refuses when another node won a race (the
 * winner's run is then answered). `change` is set when this call wrote the run.
 */
export async function postIdempotentRun(pool: pg.Pool, node: string, record: RunRecord): Promise<PostedRun> {
  const key = record.idempotency_key;
  if (key === undefined) throw new Error("postIdempotentRun needs a record with an idempotency_key");
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptPost(pool, node, record, key);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === UNIQUE_VIOLATION && attempt === 0) continue;
      if (isConnectionError(error))
        throw new AgentdError("STORE_UNAVAILABLE", "PostgreSQL cannot be reached right now", {
          hint: "send the same request again with the same Idempotency-Key: it makes one run",
          cause: error,
        });
      throw error;
    }
  }
}

async function attemptPost(pool: pg.Pool, node: string, record: RunRecord, key: string): Promise<PostedRun> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const change = await takeChangeNumber(client);
    const held = await client.query<{ record: unknown; recent: boolean }>(
      `SELECT record, created_at::timestamptz > now() - $3 * interval '1 millisecond' AS recent
       FROM agentd_runs WHERE agent = $1 AND idempotency_key = $2 FOR UPDATE`,
      [record.agent, key, IDEMPOTENCY_WINDOW_MILLISECONDS],
    );
    const row = held.rows[0];
    const existing = row?.recent === true ? parseRunRecord(row.record) : undefined;
    if (existing !== undefined) {
      await client.query("ROLLBACK");
      return { record: existing };
    }
    if (row !== undefined)
      await client.query(
        "UPDATE agentd_runs SET idempotency_key = NULL WHERE agent = $1 AND idempotency_key = $2",
        [record.agent, key],
      );
    await client.query(
      `INSERT INTO agentd_runs (id, agent, node, status, created_at, ended_at, parent_run, record, change, claimed_by, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8, NULL, $9)`,
      [
        record.id,
        record.agent,
        node,
        record.status,
        record.created_at,
        record.parent_run ?? null,
        JSON.stringify(record),
        change,
        key,
      ],
    );
    await client.query("SELECT pg_notify('agentd_changes', $1)", [change]);
    await client.query("SELECT pg_notify('agentd_queue', '')");
    await client.query("COMMIT");
    return { record, change };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
