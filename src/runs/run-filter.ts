import type { RunStatus } from "../run-vocabulary/run-status.js";

/** Which runs a listing returns (`GET /runs`, `agentd runs`): newest first, every field optional. */
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

/** A filter as a store pages it: `limit` decided (1 to MAX_RUN_LIST_LIMIT of run-records.ts). */
export type RunListQuery = RunFilter & { limit: number };
