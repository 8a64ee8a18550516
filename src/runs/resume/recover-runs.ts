import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { isTerminal } from "../../run-vocabulary/run-status.js";
import type { RunRecords } from "../run-records.js";

/** What crash recovery found: runs it marked crashed, and queued runs to queue again. */
export interface RecoveredRuns {
  crashed: RunRecord[];
  /** Runs that were `queued` (never started), oldest first: nothing was lost, so they run again. */
  queued: RunRecord[];
}

/**
 * SPEC 8: a run found started but unfinished at start-up was interrupted by a crash. It is ended by
 * `markCrashed` (`failed` with reason `crashed`: the record rewritten first, then a `status` event so
 * followers see it, keeping the usage and cost it had recorded so far). Runs still `queued` had not
 * started: they are handed back to be queued again in their order. Finished runs are left as they are.
 */
export function recoverInterruptedRuns(
  store: RunRecords,
  markCrashed: (record: RunRecord, message: string) => RunRecord,
): RecoveredRuns {
  const recovered: RecoveredRuns = { crashed: [], queued: [] };
  for (const record of store.unfinished()) {
    if (isTerminal(record.status)) continue;
    if (record.status === "queued") {
      recovered.queued.push(record);
      continue;
    }
    recovered.crashed.push(markCrashed(record, `the daemon stopped while the run was ${record.status}`));
  }
  return recovered;
}

/** An interrupted run's record ended `failed`/`crashed`, keeping the usage and cost it had recorded. */
export function crashedRecord(record: RunRecord, endedAt: Date, message: string): RunRecord {
  return {
    ...record,
    status: "failed",
    reason: "crashed",
    ended_at: endedAt.toISOString(),
    error: { code: "INTERNAL", message },
  };
}

/**
 * The spending of a run cut off by a crash: its record's, or its checkpoint's when that is more. A
 * running run's record is written at most once a second between status changes
 * (launch/spending-writes.ts), while its checkpoint, appended after each model call before the
 * round's tools run, carries the spending so far: what the record had not caught up with yet.
 */
export function spendingAfterCrash(record: RunRecord, checkpoint: Checkpoint | undefined): RunRecord {
  if (checkpoint === undefined) return record;
  const usage = checkpoint.usage.total_tokens > record.usage.total_tokens ? checkpoint.usage : record.usage;
  const costUsd = Math.max(record.cost_usd, checkpoint.cost_usd);
  if (usage === record.usage && costUsd === record.cost_usd) return record;
  return { ...record, usage, cost_usd: costUsd };
}
