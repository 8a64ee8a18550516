import type { LaunchPacing } from "./launch/launch-pacing.js";
import type { LaunchWave } from "./launch/launch-wave.js";
import type { LiveRun, LiveRuns } from "./live-runs.js";
import type { RunQueue } from "./queue/run-queue.js";
import type { RunRecorder } from "./record/run-recorder.js";
import type { RunIdSource } from "./run-id.js";
import type { RunManagerOptions } from "./run-manager-options.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";

/**
 * What every room of a run's life works on (queue, launch, children, resume, pause, take-over):
 * the runs held here, their recorder, and the lifecycle's own steps. RunManager builds it once.
 */
export interface RunLife {
  readonly options: RunManagerOptions;
  readonly now: () => Date;
  readonly createRunId: RunIdSource;
  readonly redact: (record: RunRecord) => RunRecord;
  readonly live: LiveRuns;
  readonly recorder: RunRecorder;
  readonly pacing: LaunchPacing;
  /** The launches under way, and the work that waits until their first requests are out. */
  readonly wave: LaunchWave;
  /** Where runs started here wait for a slot: this process, or the cluster's queue. */
  queue(): RunQueue;
  /** False once shutdown began: new runs are refused. */
  accepting(): boolean;
  /** Launches the waiting runs the limits allow, now. */
  dispatch(): void;
  /** Starts a run's worker in a slot of its own. */
  launch(run: LiveRun): void;
  /** Ends a run held here: its slot is freed, its record written and its end told. */
  end(run: LiveRun, patch: Partial<RunRecord>, message?: string): RunRecord;
  /** Tells the idle waiters once no run is held here and the last status changes went out. */
  notifyIdleWhenSettled(): void;
  /** Resumes a paused run, or a run cut off by a crash or a shutdown (RunManager.resume). */
  resume(id: string): Promise<RunRecord>;
}
