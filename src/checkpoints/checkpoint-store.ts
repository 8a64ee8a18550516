import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ChatMessage } from "../llm/chat-message.js";
import type { Logger } from "../logging/logger.js";
import { LatestFileWrites } from "../util/latest-file-writes.js";
import type { StorageGate } from "../util/storage-gate.js";
import type { CheckpointRecords } from "./checkpoint-records.js";
import { type Checkpoint, CheckpointSchema, type RunCheckpoints } from "./checkpoint.js";

/**
 * One checkpoint file per run under `<data_dir>/checkpoints/`, replaced atomically off the event
 * loop (survives a kill -9 once the promise of `save` resolved; `load` sees a save at once). A run
 * that ends for good drops its file; one cut off by a crash or a shutdown keeps it, so it can be
 * resumed.
 */
export class CheckpointStore implements CheckpointRecords {
  readonly #directory: string;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #writes: LatestFileWrites;

  /** `storage`: a save that fails for lack of space waits for room (the run waits with it). */
  constructor(options: { dataDirectory: string; logger: Logger; now?: () => Date; storage?: StorageGate }) {
    this.#writes = new LatestFileWrites(options.storage ? { storage: options.storage } : {});
    this.#directory = path.join(options.dataDirectory, "checkpoints");
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  /** The checkpoints of one run: saved here, resumed from `resumeFrom`. */
  forRun(run: string, resumeFrom?: Checkpoint): RunCheckpoints {
    return {
      resumeFrom,
      save: ({ messages, ...state }) => {
        // The conversation only grows, and a message is the same object from save to save (see
        // masking-checkpoints.ts): each is turned into JSON once, not the whole history at each save.
        const head = JSON.stringify({ run, ...state, saved_at: this.#now().toISOString() });
        const text = `${head.slice(0, -1)},"messages":[${messages.map(this.#jsonOf).join(",")}]}`;
        return this.#writes.write(this.#fileOf(run), text, { sync: false });
      },
    };
  }

  /** The last checkpoint of a run, or undefined (none, or unreadable: logged). */
  load(run: string): Checkpoint | undefined {
    const file = this.#fileOf(run);
    // A save or a removal under way is what the file is about to hold.
    const pending = this.#writes.pending(file);
    if (pending === null) return undefined;
    if (pending === undefined && !existsSync(file)) return undefined;
    const parsed = CheckpointSchema.safeParse(parseJson(pending ?? readFileSync(file, "utf8")));
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

  readonly #messageJson = new WeakMap<ChatMessage, string>();

  readonly #jsonOf = (message: ChatMessage): string => {
    let json = this.#messageJson.get(message);
    if (json === undefined) {
      json = JSON.stringify(message);
      this.#messageJson.set(message, json);
    }
    return json;
  };

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
