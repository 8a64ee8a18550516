import type pg from "pg";
import {
  type AuditDraft,
  type AuditEntry,
  AuditEntrySchema,
  AuditEntryMaker,
  auditIdBefore,
} from "../../access/audit-entry.js";
import type { AuditLog } from "../../access/audit-log.js";
import { type Clock, systemClock } from "../../clock/clock.js";

/**
 * The audit trail in `agentd_audit` (append-only: the table refuses UPDATE, and DELETE but of the
 * rows older than the cutoff a prune names in its own transaction, migration 15).
 */
export class PostgresAuditLog implements AuditLog {
  readonly #pool: pg.Pool;
  readonly #clock: Clock;
  readonly #node: string | undefined;
  /** Ids in the order this log made them. */
  readonly #entries = new AuditEntryMaker();

  constructor(pool: pg.Pool, options: { clock?: Clock; node?: string } = {}) {
    this.#pool = pool;
    this.#clock = options.clock ?? systemClock;
    this.#node = options.node;
  }

  async append(draft: AuditDraft): Promise<AuditEntry> {
    const entry = this.#entries.make(draft, new Date(this.#clock.now()), this.#node);
    await this.#pool.query("INSERT INTO agentd_audit (id, entry) VALUES ($1, $2)", [
      entry.id,
      JSON.stringify(entry),
    ]);
    return entry;
  }

  async page(after: string | undefined, limit: number): Promise<AuditEntry[]> {
    const result = await this.#pool.query<{ entry: unknown }>(
      "SELECT entry FROM agentd_audit WHERE id > $1 ORDER BY id LIMIT $2",
      [after ?? "", limit],
    );
    return result.rows.flatMap((row) => {
      const parsed = AuditEntrySchema.safeParse(row.entry);
      return parsed.success ? [parsed.data] : [];
    });
  }

  async prune(before: Date): Promise<number> {
    const cutoff = auditIdBefore(before);
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      try {
        // The table's trigger lets a DELETE through only below the cutoff set for this transaction.
        await client.query("SELECT set_config('agentd.audit_prune_before', $1, true)", [cutoff]);
        const result = await client.query("DELETE FROM agentd_audit WHERE id < $1", [cutoff]);
        await client.query("COMMIT");
        return result.rowCount ?? 0;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  }
}
