import type { EventPublisher } from "../events/event-bus.js";
import type { RunRecord } from "./run-record.js";
import { isTerminal } from "./run-status.js";
import type { RunRecords } from "./run-records.js";

/** What crash recovery found: runs it marked crashed, and queued runs to queue again. */
export interface RecoveredRuns {
  crashed: RunRecord[];
  /** Runs that were `queued` (never started), oldest first: nothing was lost, so they run again. */
  queued: RunRecord[];
}

/**
 * SPEC 8: a run found started but unfinished at start-up was interrupted by a crash. It is marked
 * `failed` with reason `crashed` (the record rewritten first, then a `status` event so followers
 * see it), keeping the usage and cost it had recorded so far. Runs still `queued` had not started:
 * they are handed back to be queued again in their order. Finished runs are left as they are.
 */
export function recoverInterruptedRuns(
  store: RunRecords,
  events: EventPublisher,
  now: () => Date,
): RecoveredRuns {
  const recovered: RecoveredRuns = { crashed: [], queued: [] };
  for (const record of store.all()) {
    if (isTerminal(record.status)) continue;
    if (record.status === "queued") {
      recovered.queued.push(record);
      continue;
    }
    recovered.crashed.push(
      markCrashed(store, events, record, now, `the daemon stopped while the run was ${record.status}`),
    );
  }
  return recovered;
}

/**
 * Ends an interrupted run `failed`/`crashed`: the record first, then the `status` event, keeping
 * the usage and cost it had recorded so far.
 */
export function markCrashed(
  store: RunRecords,
  events: EventPublisher,
  record: RunRecord,
  now: () => Date,
  message: string,
): RunRecord {
  const crashed: RunRecord = {
    ...record,
    status: "failed",
    reason: "crashed",
    ended_at: now().toISOString(),
    error: { code: "INTERNAL", message },
  };
  store.save(crashed);
  events.publish({
    agent: crashed.agent,
    run: crashed.id,
    type: "status",
    data: {
      status: "failed",
      reason: "crashed",
      message: crashed.error?.message ?? "crashed",
      usage: crashed.usage,
      cost_usd: crashed.cost_usd,
    },
  });
  return crashed;
}
