import { existsSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { errnoCodeOf } from "../util/errno-code.js";
import { LatestFileWrites } from "../util/latest-file-writes.js";
import { readRegularFileSync } from "../util/read-regular-file.js";
import type { StorageGate } from "../util/storage-gate.js";
import type { CheckpointRecords } from "./checkpoint-records.js";
import { type Checkpoint, CheckpointSchema, type RunCheckpoints } from "./checkpoint.js";
import { CheckpointJournal } from "./checkpoint-journal.js";
import { readCheckpointJournal } from "./read-checkpoint-journal.js";

/**
 * One checkpoint file per run under `<data_dir>/checkpoints/`, a journal (CheckpointJournal): a
 * save that only adds messages is a line appended on the event loop, any other replaces the file
 * atomically off the event loop. Either survives a kill -9 once the promise of `save` resolved;
 * `load` sees a save at once. A run that ends for good drops its file; one cut off by a crash or a
 * shutdown keeps it, so it can be resumed.
 */
export class CheckpointStore implements CheckpointRecords {
  readonly #directory: string;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #writes: LatestFileWrites;
  /** The runs saving here, each with its file. */
  readonly #journals = new Map<string, CheckpointJournal>();

  /** `storage`: a save that fails for lack of space waits for room (the run waits with it). */
  constructor(options: { dataDirectory: string; logger: Logger; now?: () => Date; storage?: StorageGate }) {
    this.#writes = new LatestFileWrites(options.storage ? { storage: options.storage } : {});
    this.#directory = path.join(options.dataDirectory, "checkpoints");
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  /** The checkpoints of one run: saved here, resumed from `resumeFrom`. */
  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints {
    // The conversation only grows, and a message is the same object from save to save (see
    // masking-checkpoints.ts): each is written once while it only grows. Its JSON is not kept for
    // the rare whole rewrite (which serialises the messages again): held for the whole run, it was
    // a second copy of the conversation, every piece of it promoted to the old generation.
    const journal = new CheckpointJournal({
      run,
      file: this.#fileOf(run),
      writes: this.#writes,
      now: this.#now,
    });
    this.#journals.get(run)?.close();
    this.#journals.set(run, journal);
    return { resumeFrom, save: (checkpoint) => journal.save(checkpoint) };
  }

  /** The last checkpoint of a run, or undefined (none, or unreadable: logged). */
  load(run: string): Checkpoint | undefined {
    const file = this.#fileOf(run);
    // A save or a removal under way is what the file is about to hold.
    const pending = this.#writes.pending(file);
    if (pending === null) return undefined;
    if (pending === undefined && !existsSync(file)) return undefined;
    let text: string;
    try {
      text = pending ?? readRegularFileSync(file);
    } catch (error) {
      // A folder or a FIFO in its place ended the start that recovered its run with INTERNAL.
      this.#logger.warn(
        { file, err: error },
        `skipping a checkpoint that cannot be read (${errnoCodeOf(error) ?? "not a regular file"}): the run cannot be resumed; move ${file} aside`,
      );
      return undefined;
    }
    const parsed = CheckpointSchema.safeParse(readCheckpointJournal(text));
    if (parsed.success) return parsed.data;
    this.#logger.warn({ file, issues: parsed.error.issues.slice(0, 3) }, "skipping an unreadable checkpoint");
    return undefined;
  }

  /**
   * Drops a finished run's checkpoint in the background, after its saves under way: deleting a
   * file costs about a millisecond on a journaling disk, and one left by a crash meanwhile belongs
   * to a run that is not resumable.
   */
  remove(run: string): void {
    this.#journals.get(run)?.close();
    this.#journals.delete(run);
    const file = this.#fileOf(run);
    this.#writes
      .remove(file)
      .catch((error: unknown) =>
        this.#logger.warn({ err: error, file }, "could not delete a finished run's checkpoint"),
      );
  }

  /** Checkpoints with a write under way. */
  get pendingWrites(): number {
    return this.#writes.size;
  }

  /** Resolves once every save and removal so far is done (before the data folder is let go). */
  settled(): Promise<void> {
    return this.#writes.settled();
  }

  /** Lets go of the files kept open for appends, once the store is settled (a later save writes its file whole). */
  close(): void {
    for (const journal of this.#journals.values()) journal.close();
    this.#journals.clear();
  }

  #fileOf(run: string): string {
    return path.join(this.#directory, `${run}.json`);
  }
}
