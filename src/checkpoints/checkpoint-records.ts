import type { Checkpoint, RunCheckpoints } from "./checkpoint.js";

/** Where runs' checkpoints are kept: files in `data_dir` (CheckpointStore) or PostgreSQL. */
export interface CheckpointRecords {
  /** The checkpoints of one run: saved here, resumed from `resumeFrom`. */
  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints;
  /** The last checkpoint of a run, or undefined. */
  load(run: string): Checkpoint | undefined;
  remove(run: string): void;
}
