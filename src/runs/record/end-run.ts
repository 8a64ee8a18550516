import type { LiveRun } from "../live-runs.js";
import type { RunLife } from "../run-life.js";
import { isResumable } from "../resume/resume-interrupted.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

/**
 * Ends a run held here (RunLife.end): its control let go, its slot freed, its ending record written
 * and told; then a parent waiting for it goes on, its checkpoint goes (unless it can be resumed
 * from it), and the next waiting runs launch.
 */
export function endRun(life: RunLife, run: LiveRun, patch: Partial<RunRecord>, message?: string): RunRecord {
  const { live, recorder } = life;
  run.control?.dispose();
  if (run.control && live.has(run.record.id)) live.inFlight.add(run.record.agent, -1);
  live.delete(run.record.id);
  const ended = { ...patch, ended_at: life.now().toISOString() };
  const record = recorder.transition(run, ended, message);
  // A parent waiting for its sub-agent goes on once the child's end is on disk and told.
  const { onEnd } = run;
  if (onEnd) void recorder.publications.published(record.id).then(() => onEnd(record));
  // Its checkpoint goes once the end is written: a crash before that leaves the run as it was,
  // resumable from the checkpoint, never without it.
  const { checkpoints } = life.options;
  if (checkpoints && !isResumable(record))
    void recorder.publications.published(record.id).then(() => checkpoints.remove(record.id));
  life.dispatch();
  life.notifyIdleWhenSettled();
  return record;
}
