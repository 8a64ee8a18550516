import type { AgentDefinition } from "../../definitions/agent-definition.js";
import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { NO_CHECKPOINT_HINT, conflict } from "../run-conflict.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { runnableDefinition } from "../runnable-definition.js";

/** A run cut off by a crash or a shutdown, which a checkpoint can continue. */
export function isResumable(record: RunRecord): boolean {
  return (
    (record.status === "failed" && record.reason === "crashed") ||
    (record.status === "stopped" && record.reason === "daemon_shutdown")
  );
}

/** What the `status` event of a run resumed from its checkpoint says. */
export function resumedMessage(checkpoint: Checkpoint): string {
  return `resumed from its checkpoint after round ${checkpoint.round}`;
}

/**
 * At start: resumes every run cut off by the last crash or shutdown whose agent has `resume: true`
 * and that left a checkpoint (`resumeInterrupted`: here, or on a cluster back to its queue).
 * Returns the runs resumed.
 */
export async function resumeInterruptedRuns(
  life: RunLife,
  resumeInterrupted: (id: string) => Promise<RunRecord>,
): Promise<RunRecord[]> {
  const { options, recorder } = life;
  const resumed: RunRecord[] = [];
  for (const stored of options.store.interrupted()) {
    const record = recorder.newest(stored.id) ?? stored;
    if (!isResumable(record) || record.parent_run !== undefined) continue;
    const availability = options.agents(record.agent);
    if (availability?.state !== "ready" || !availability.definition.resume) continue;
    if (!options.checkpoints?.load(record.id)) continue;
    try {
      resumed.push(await resumeInterrupted(record.id));
    } catch (error) {
      options.logger.warn({ err: error, run: record.id }, "could not resume an interrupted run");
    }
  }
  return resumed;
}

/** A run cut off by a crash or a shutdown, queued again on the agent's current definition. */
export function resumedRecord(
  life: RunLife,
  ended: RunRecord,
): { record: RunRecord; definition: AgentDefinition } {
  if (!life.accepting())
    throw new AgentdError("SHUTTING_DOWN", `cannot resume ${ended.id}: the daemon is shutting down`);
  const definition = runnableDefinition(life.options.agents, ended.agent);
  const { reason: _reason, error: _error, ended_at: _endedAt, result: _result, ...kept } = ended;
  return {
    record: life.redact({ ...kept, status: "queued", definition_hash: definition.hash }),
    definition,
  };
}

/** Queues here, to continue from its checkpoint, a run cut off by a crash or a shutdown. */
export function resumeHere(life: RunLife, ended: RunRecord): RunRecord {
  const checkpoint = life.options.checkpoints?.load(ended.id);
  if (!checkpoint) {
    throw conflict(ended, "resume", NO_CHECKPOINT_HINT);
  }
  const { record, definition } = resumedRecord(life, ended);
  void life.recorder.publishAfterWrite(record, resumedMessage(checkpoint), {
    resumed_from_round: checkpoint.round,
  });
  life.live.set({
    record,
    definition,
    workerStatus: "running",
    depth: 0,
    resumeFrom: checkpoint,
  });
  life.live.enqueue(record.id);
  life.dispatch();
  return record;
}
