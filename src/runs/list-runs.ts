import { AgentdError } from "../errors/agentd-error.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunRecords } from "./run-records.js";
import type { RunStatus } from "../run-vocabulary/run-status.js";

/** Filters of `GET /runs`. */
export interface RunFilter {
  agent?: string | undefined;
  status?: RunStatus | undefined;
  /** Only the sub-agent runs this run started. */
  parent?: string | undefined;
  /** Only runs created at or after this time. */
  since?: Date | undefined;
  /** Only runs created before this run (a page's cursor: the last run of the page before). */
  before?: string | undefined;
  /** At most this many, the newest. */
  limit?: number | undefined;
}

/** Runs newest first, optionally of one agent, in one status, of one parent, since a time, at most `limit`. */
export function listRuns(store: RunRecords, filter: RunFilter = {}): RunRecord[] {
  const since = filter.since?.toISOString();
  const all = store.all();
  // The store keeps creation order: a page goes on from where the page before ended.
  const end = filter.before === undefined ? all.length : all.findIndex((run) => run.id === filter.before);
  if (end < 0) {
    throw new AgentdError("NOT_FOUND", `no run "${String(filter.before)}" to list the runs before`, {
      field: "before",
      hint: "pass the id of the last run of the page before, as GET /runs returned it",
    });
  }
  const runs = all
    .slice(0, end)
    .filter(
      (run) =>
        (filter.agent === undefined || run.agent === filter.agent) &&
        (filter.status === undefined || run.status === filter.status) &&
        (filter.parent === undefined || run.parent_run === filter.parent) &&
        (since === undefined || run.created_at >= since),
    )
    .reverse();
  return filter.limit === undefined ? runs : runs.slice(0, filter.limit);
}
