import { conflict, liveRunFor } from "../run-conflict.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { isResumable } from "../resume/resume-interrupted.js";

/**
 * Pauses a running or waiting run, and its sub-agent runs in flight; pausing a paused run changes
 * nothing. The run's signal stays; its clock stops (RunControl.pause).
 */
export function pauseRun(life: RunLife, id: string): RunRecord {
  const run = liveRunFor(life, id, "pause");
  if (run.record.status === "paused") return run.record;
  if (!run.control) throw conflict(run.record, "pause", "a queued run has not started; stop it instead");
  run.control.pause();
  const record = life.recorder.transition(run, { status: "paused" });
  for (const child of life.live.childrenOf(id))
    if (child.control && child.record.status !== "paused") pauseRun(life, child.record.id);
  return record;
}

/**
 * Resumes a paused run where it was (running, or waiting for an approval), with its paused
 * sub-agent runs; a run cut off by a crash or a shutdown goes to its queue (`resumeEnded`).
 */
export function resumeRun(life: RunLife, id: string): RunRecord {
  const ended = life.live.has(id) ? undefined : life.recorder.newest(id);
  if (ended && isResumable(ended)) return life.queue().resumeEnded(ended);
  const run = liveRunFor(life, id, "resume");
  if (run.record.status !== "paused" || !run.control) {
    if (run.record.status === "running" || run.record.status === "waiting") return run.record;
    throw conflict(run.record, "resume", "only a paused run can be resumed");
  }
  run.control.resume();
  const record = life.recorder.transition(run, { status: run.workerStatus });
  for (const child of life.live.childrenOf(id))
    if (child.record.status === "paused") resumeRun(life, child.record.id);
  return record;
}

/**
 * The record an action returns, once every change of its run so far is on disk and published, and
 * those of the sub-agent runs it carried along (a paused parent pauses its children).
 */
export async function reported(life: RunLife, record: RunRecord): Promise<RunRecord> {
  const family = [record.id, ...life.live.descendantsOf(record.id)];
  await Promise.all(family.map((id) => life.recorder.publications.published(id)));
  return record;
}
