import type { RunRecord } from "../run-vocabulary/run-record.js";

/**
 * A run a crash or a shutdown cut off: `failed`/`crashed` or `stopped`/`daemon_shutdown`. Such a
 * run may be resumed from its last checkpoint, so the stores keep it at hand (`interrupted()`).
 */
export function isInterrupted(record: RunRecord): boolean {
  return (
    (record.status === "failed" && record.reason === "crashed") ||
    (record.status === "stopped" && record.reason === "daemon_shutdown")
  );
}
