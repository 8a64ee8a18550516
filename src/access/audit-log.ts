import type { AuditDraft, AuditEntry } from "./audit-entry.js";

/**
 * The append-only audit trail: JSON lines under `<data_dir>/audit/` or a PostgreSQL table. Nothing
 * is ever changed or deleted through it.
 */
export interface AuditLog {
  /** Appends an entry; resolves with it once it is durable. */
  append(draft: AuditDraft): Promise<AuditEntry>;
  /** The entries after the cursor `after` (an entry id), oldest first, at most `limit`. */
  page(after: string | undefined, limit: number): Promise<AuditEntry[]>;
  close?(): Promise<void>;
}
