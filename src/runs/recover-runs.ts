import type { EventPublisher } from "../events/event-bus.js";
import type { RunRecord } from "./run-record.js";
import { isTerminal } from "./run-status.js";
import type { RunStore } from "./run-store.js";

/**
 * SPEC 8: a run found unfinished at start-up was interrupted by a crash. It is marked `failed` with
 * reason `crashed` (the record rewritten first, then a `status` event so followers see it);
 * finished runs are left as they are. Returns the runs it marked.
 */
export function recoverInterruptedRuns(
  store: RunStore,
  events: EventPublisher,
  now: () => Date,
): RunRecord[] {
  const recovered: RunRecord[] = [];
  for (const record of store.all()) {
    if (isTerminal(record.status)) continue;
    const crashed: RunRecord = {
      ...record,
      status: "failed",
      reason: "crashed",
      ended_at: now().toISOString(),
      error: { code: "INTERNAL", message: `the daemon stopped while the run was ${record.status}` },
    };
    store.save(crashed);
    events.publish({
      agent: crashed.agent,
      run: crashed.id,
      type: "status",
      data: { status: "failed", reason: "crashed", message: crashed.error?.message ?? "crashed" },
    });
    recovered.push(crashed);
  }
  return recovered;
}
