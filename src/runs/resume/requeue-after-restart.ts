import type { AgentDefinition } from "../../definitions/agent-definition.js";
import type { LiveRun } from "../live-runs.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { runnableDefinition } from "../runnable-definition.js";

/**
 * Queues a run found `queued` after a restart again (or left queued by a node that died), on the
 * agent's current definition (it had not started); a run whose agent is gone, invalid or disabled
 * now fails with its reason in the record. Returns the run queued, if it was.
 */
export function requeueAfterRestart(life: RunLife, record: RunRecord): RunRecord | undefined {
  // A sub-agent's run belongs to its parent's run, which the crash ended: nobody waits for it.
  if (record.parent_run !== undefined) {
    failQueued(life, record, `its parent run ${record.parent_run} was interrupted by the restart`);
    return undefined;
  }
  let definition: AgentDefinition;
  try {
    definition = runnableDefinition(life.options.agents, record.agent);
  } catch (error) {
    failQueued(life, record, error instanceof Error ? error.message : String(error));
    return undefined;
  }
  const live: LiveRun = {
    record: { ...record, definition_hash: definition.hash },
    definition,
    workerStatus: "running",
    depth: 0,
  };
  life.live.set(live);
  life.live.enqueue(record.id);
  life.recorder.transition(live, {}, "queued again after the daemon restarted");
  return live.record;
}

function failQueued(life: RunLife, record: RunRecord, why: string): void {
  const message = `queued before a restart, but cannot run now: ${why}`;
  life.recorder.endUnstarted(
    record,
    { status: "failed", reason: "crashed", error: { code: "CONFLICT", message } },
    message,
  );
}
