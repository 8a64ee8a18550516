import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { EMPTY_USAGE } from "../../src/run-vocabulary/run-status.js";

/** A run of `agent` just posted through the API: queued, created now unless `createdAt` says when. */
export function queuedRecord(id: string, agent = "alpha", createdAt = new Date().toISOString()): RunRecord {
  return {
    id,
    agent,
    task: `task of ${id}`,
    status: "queued",
    trigger: { kind: "api" },
    definition_hash: "hash",
    created_at: createdAt,
    usage: EMPTY_USAGE,
    cost_usd: 0,
  };
}
