import type { LiveRun } from "../live-runs.js";
import { storeFailure } from "../record/new-run-record.js";
import { resumeHere } from "../resume/resume-interrupted.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import type { RunQueue } from "./run-queue.js";

/**
 * The queue of a daemon alone on its store (and of `agentd run`): a new run's record is written,
 * then the run waits in this process, oldest first, for a slot under the daemon-wide `concurrency`
 * and its agent's `max_concurrent_runs`; it launches in a later tick than the request that queued
 * it (launch/launch-pacing.ts).
 */
export class LocalRunQueue implements RunQueue {
  readonly #life: RunLife;

  constructor(life: RunLife) {
    this.#life = life;
  }

  async add(run: LiveRun): Promise<RunRecord> {
    const life = this.#life;
    const { live, pacing, recorder } = life;
    const { record } = run;
    // Counted as the agent's (overlap, queue limit) while its record is being written.
    live.set(run);
    pacing.creating();
    try {
      await recorder.create(record);
    } catch (error) {
      live.delete(record.id);
      life.notifyIdleWhenSettled();
      throw storeFailure(record, error);
    } finally {
      // The last of a burst releases the launches it held.
      pacing.created();
    }
    recorder.publishStatus(record);
    // A shutdown that came while the record was written: the run never starts.
    if (!live.has(record.id)) return recorder.newest(record.id) ?? record;
    if (!life.accepting()) {
      const why = "the daemon shut down before the run started";
      return life.end(run, { status: "stopped", reason: "daemon_shutdown" }, why);
    }
    live.enqueue(record.id);
    // Workers start outside the tick that answers the request.
    pacing.soon();
    return record;
  }

  /** Nothing waits elsewhere. */
  fill(): void {}

  unfinishedOf(agentId: string): number {
    let count = 0;
    for (const run of this.#life.live.values()) if (run.record.agent === agentId) count += 1;
    return count;
  }

  queuedOf(agentId: string): number {
    let count = 0;
    for (const run of this.#life.live.values()) {
      if (run.record.agent === agentId && run.record.status === "queued") count += 1;
    }
    return count;
  }

  depth(): number {
    return this.#life.live.waiting.length;
  }

  resumeInterrupted(ended: RunRecord): Promise<RunRecord> {
    return this.#life.resume(ended.id);
  }

  resumeEnded(ended: RunRecord): RunRecord {
    return resumeHere(this.#life, ended);
  }

  close(): void {}
}

/** The local queue, as RunManagerOptions.runQueue takes it (the default). */
export function localRunQueue(life: RunLife): RunQueue {
  return new LocalRunQueue(life);
}
