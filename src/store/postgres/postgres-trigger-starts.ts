import type pg from "pg";
import type { SharedStartVerdict, SharedTriggerStarts } from "../../triggers/shared-trigger-starts.js";

/** The first key of the advisory locks that serialise one trigger's starts (the second: the key's hash). */
const TRIGGER_LOCK_SPACE = 7_412_017;

/**
 * Webhook triggers' starts in `agentd_trigger_starts`, straight on the pool. A start is taken in one
 * transaction under a transaction-scoped advisory lock of its trigger, so two nodes taking the last
 * start of a window at once are told apart: one gets it, the other is refused. The window is timed
 * by the node's clock (the daemon's one Clock), as a lone daemon's is.
 */
export class PostgresTriggerStarts implements SharedTriggerStarts {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async take(key: string, runs: number, perMilliseconds: number, now: Date): Promise<SharedStartVerdict> {
    const since = new Date(now.getTime() - perMilliseconds);
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      try {
        await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [TRIGGER_LOCK_SPACE, key]);
        await client.query("DELETE FROM agentd_trigger_starts WHERE key = $1 AND started_at <= $2", [
          key,
          since,
        ]);
        const window = await client.query<{ count: string; oldest: Date | null }>(
          "SELECT count(*) AS count, min(started_at) AS oldest FROM agentd_trigger_starts WHERE key = $1",
          [key],
        );
        const row = window.rows[0];
        let verdict: SharedStartVerdict;
        if (row !== undefined && Number(row.count) >= runs && row.oldest !== null) {
          verdict = { taken: false, oldest: row.oldest };
        } else {
          const inserted = await client.query<{ id: string }>(
            "INSERT INTO agentd_trigger_starts (key, started_at) VALUES ($1, $2) RETURNING id",
            [key, now],
          );
          verdict = { taken: true, id: String(inserted.rows[0]?.id) };
        }
        await client.query("COMMIT");
        return verdict;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  }

  async giveBack(id: string): Promise<void> {
    await this.#pool.query("DELETE FROM agentd_trigger_starts WHERE id = $1", [id]);
  }
}
