import { AgentdError } from "../errors/agentd-error.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { LiveRun } from "./live-runs.js";
import type { RunLife } from "./run-life.js";

/**
 * Why a run cannot be resumed when no checkpoint of it could be loaded: it saved none, or the one
 * it saved cannot be read (a damaged file, named in the daemon's log with what to do).
 */
export const NO_CHECKPOINT_HINT =
  "the run left no checkpoint that can be read (only LLM runs save one after each round; a damaged one is named in the daemon's log)";

/** An action the run's state does not allow (pause a queued run, resume a completed one…). */
export function conflict(record: RunRecord, action: string, why: string): AgentdError {
  return new AgentdError("CONFLICT", `cannot ${action} run ${record.id}: it is ${record.status}`, {
    hint: why,
    details: { status: record.status },
  });
}

/** The run held here an action is for; NOT_FOUND, or CONFLICT when it has already ended. */
export function liveRunFor(life: RunLife, id: string, action: string): LiveRun {
  const live = life.live.get(id);
  if (live) return live;
  const record = life.recorder.newest(id);
  if (!record) throw new AgentdError("NOT_FOUND", `no run "${id}"`, { hint: "GET /runs lists the runs" });
  throw conflict(record, action, "the run has already ended");
}
