import type { AuditDraft, AuditEntry } from "./audit-entry.js";

/**
 * The append-only audit trail: JSON lines under `<data_dir>/audit/` or a PostgreSQL table. Nothing
 * is ever changed through it, and only entries past retention are deleted (`prune`).
 */
export interface AuditLog {
  /** Appends an entry; resolves with it once it is durable. */
  append(draft: AuditDraft): Promise<AuditEntry>;
  /** The entries after the cursor `after` (an entry id), oldest first, at most `limit`. */
  page(after: string | undefined, limit: number): Promise<AuditEntry[]>;
  /**
   * Deletes the entries made before `before` (retention, `retention.audit_days`); resolves with how
   * many went. The only deletion there is: nothing newer is ever touched.
   */
  prune(before: Date): Promise<number>;
  close?(): Promise<void>;
}
