import type pg from "pg";
import type { DeliveryRow, DeliveryRowQuery, SharedDeliveryRows } from "../shared-delivery-rows.js";

/**
 * Finished deliveries the cluster keeps, newest first, whichever node made them (a lone daemon's
 * files store keeps as many). Counted over the cluster, not per node: a node started again is a new
 * node, and rows counted per node would pile up at every restart.
 */
const FINISHED_KEPT = 1_000;
/** Rows written by one statement at most. */
const ROWS_PER_STATEMENT = 1_000;

/**
 * Deliveries in `agentd_deliveries`, straight on the pool (a delivery is stored before its first
 * attempt, and that must be known to have landed). A row is written only while this node holds it
 * (`claimed_by`), so a node that was taken for dead and comes back cannot undo what the node that
 * adopted its deliveries did. Adoption is one `UPDATE … WHERE claimed_by is not a live node`:
 * PostgreSQL's row locks make each open row go to exactly one adopter.
 */
export class PostgresDeliveries implements SharedDeliveryRows {
  readonly #pool: pg.Pool;
  readonly #node: string;

  constructor(pool: pg.Pool, node: string) {
    this.#pool = pool;
    this.#node = node;
  }

  async write(rows: readonly DeliveryRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
      const batch = rows.slice(start, start + ROWS_PER_STATEMENT);
      await this.#pool.query(
        `INSERT INTO agentd_deliveries (id, agent, status, record, claimed_by)
         SELECT id, agent, status, record, $5::text
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS given (id, agent, status, record)
         ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record, updated_at = now()
         WHERE agentd_deliveries.claimed_by = $5`,
        [
          batch.map((row) => row.id),
          batch.map((row) => row.agent),
          batch.map((row) => row.status),
          batch.map((row) => row.record),
          this.#node,
        ],
      );
    }
    if (rows.some((row) => row.status === "sent" || row.status === "failed")) {
      // Finished deliveries beyond the newest FINISHED_KEPT are history nobody reads. A finished
      // row is never written again, so deleting one another node holds undoes nothing.
      await this.#pool.query(
        `DELETE FROM agentd_deliveries WHERE status IN ('sent', 'failed') AND id COLLATE "C" < (
           SELECT id FROM agentd_deliveries WHERE status IN ('sent', 'failed')
           ORDER BY id COLLATE "C" DESC OFFSET $1 LIMIT 1)`,
        [FINISHED_KEPT - 1],
      );
    }
  }

  async adopt(): Promise<string[]> {
    await this.#pool.query(
      `UPDATE agentd_deliveries SET claimed_by = $1, updated_at = now()
       WHERE status IN ('pending', 'retrying') AND claimed_by <> $1
         AND NOT EXISTS (SELECT 1 FROM agentd_nodes WHERE id = agentd_deliveries.claimed_by AND lease_until > now())`,
      [this.#node],
    );
    const held = await this.#pool.query<{ record: string }>(
      `SELECT record FROM agentd_deliveries WHERE claimed_by = $1 AND status IN ('pending', 'retrying') ORDER BY id`,
      [this.#node],
    );
    return held.rows.map((row) => row.record);
  }

  async page(query: DeliveryRowQuery): Promise<string[]> {
    const rows = await this.#pool.query<{ record: string }>(
      `SELECT record FROM agentd_deliveries
       WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR agent = $2)
         AND ($3::text IS NULL OR (record::jsonb ->> 'run') = $3)
         AND ($4::text IS NULL OR id COLLATE "C" < $4)
       ORDER BY id COLLATE "C" DESC LIMIT $5`,
      [query.status ?? null, query.agent ?? null, query.run ?? null, query.before ?? null, query.limit],
    );
    return rows.rows.map((row) => row.record);
  }
}
