import { AgentdError } from "../errors/agentd-error.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunListQuery } from "./run-filter.js";

/** Whether a run passes a listing's filters (`before` and `limit` aside). */
export function matchesRunQuery(run: RunRecord, query: RunListQuery): boolean {
  return (
    (query.agent === undefined || run.agent === query.agent) &&
    (query.status === undefined || run.status === query.status) &&
    (query.parent === undefined || run.parent_run === query.parent) &&
    (query.since === undefined || run.created_at >= query.since.toISOString())
  );
}

/** The error of a `before` that names no listed run. */
export function unknownCursor(before: string): AgentdError {
  return new AgentdError("NOT_FOUND", `no run "${before}" to list the runs before`, {
    field: "before",
    hint: "pass the id of the last run of the page before, as GET /runs returned it",
  });
}

/** A page of runs held in memory in creation order (`all`, oldest first): newest first. */
export function listRunsInMemory(all: readonly RunRecord[], query: RunListQuery): RunRecord[] {
  const end = query.before === undefined ? all.length : all.findIndex((run) => run.id === query.before);
  if (end < 0) throw unknownCursor(String(query.before));
  const page: RunRecord[] = [];
  for (let index = end - 1; index >= 0 && page.length < query.limit; index--) {
    const run = all[index];
    if (run && matchesRunQuery(run, query)) page.push(run);
  }
  return page;
}
