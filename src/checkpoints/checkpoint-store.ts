import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { writeFileAtomically } from "../runs/atomic-write.js";
import type { SpareFiles } from "../util/spare-files.js";
import type { CheckpointRecords } from "./checkpoint-records.js";
import { type Checkpoint, CheckpointSchema, type RunCheckpoints } from "./checkpoint.js";

/**
 * One checkpoint file per run under `<data_dir>/checkpoints/`, replaced atomically (survives a
 * kill -9 once `save` returns). A run that ends for good drops its file; one cut off by a crash or a
 * shutdown keeps it, so it can be resumed.
 */
export class CheckpointStore implements CheckpointRecords {
  readonly #directory: string;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #spares: SpareFiles | undefined;

  /** `spares`: temp files made ahead for the atomic rewrites (see SpareFiles). */
  constructor(options: { dataDirectory: string; logger: Logger; now?: () => Date; spares?: SpareFiles }) {
    this.#directory = path.join(options.dataDirectory, "checkpoints");
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
    this.#spares = options.spares;
  }

  /** The checkpoints of one run: saved here, resumed from `resumeFrom`. */
  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints {
    return {
      resumeFrom,
      save: (state) => {
        const checkpoint: Checkpoint = { run, ...state, saved_at: this.#now().toISOString() };
        writeFileAtomically(this.#fileOf(run), JSON.stringify(checkpoint), {
          sync: false,
          spares: this.#spares,
        });
      },
    };
  }

  /** The last checkpoint of a run, or undefined (none, or unreadable: logged). */
  load(run: string): Checkpoint | undefined {
    const file = this.#fileOf(run);
    if (!existsSync(file)) return undefined;
    const parsed = CheckpointSchema.safeParse(parseJson(readFileSync(file, "utf8")));
    if (parsed.success) return parsed.data;
    this.#logger.warn({ file, issues: parsed.error.issues.slice(0, 3) }, "skipping an unreadable checkpoint");
    return undefined;
  }

  /**
   * Drops a finished run's checkpoint in the background: deleting a file costs about a millisecond
   * on a journaling disk, and one left by a crash meanwhile belongs to a run that is not resumable.
   */
  remove(run: string): void {
    const file = this.#fileOf(run);
    rm(file, { force: true }).catch((error: unknown) =>
      this.#logger.warn({ err: error, file }, "could not delete a finished run's checkpoint"),
    );
  }

  #fileOf(run: string): string {
    return path.join(this.#directory, `${run}.json`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
