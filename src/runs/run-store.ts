import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { GroupedAppend } from "../util/grouped-append.js";
import { flushToDeviceLater } from "../util/flush-to-device.js";
import { LatestFileWrites } from "../util/latest-file-writes.js";
import type { StorageGate } from "../util/storage-gate.js";
import type { RunRecord } from "./run-record.js";
import type { RunRecords } from "./run-records.js";
import { isTerminal } from "./run-status.js";
import { RunRecordIndex, type UnfinishedRuns } from "./run-record-index.js";
import { type RunIndexEntry, RunIndexEntrySchema, RunRecordSchema } from "./run-record-schema.js";

export interface RunStoreOptions {
  dataDirectory: string;
  logger: Logger;
  /**
   * Told of writes that fail for lack of space: a record's save then waits for room and is tried
   * again (its status event waits with it); a new run's line fails, and its caller is refused.
   */
  storage?: StorageGate;
}

/**
 * The durable run records: one `<data_dir>/runs/<run>.json` per run, replaced atomically on every
 * change, plus an append-only `index.jsonl` naming every run in creation order with the record it
 * was created with. Everything is also held in memory, so reads never touch the disk. Nothing is
 * served before it is on disk: a run is listed once `create` resolved, and a changed record once
 * the promise of its `save` resolved, so a status event published afterwards never runs ahead of
 * it. Records are written off the event loop; the index is appended to on it, on a kept descriptor.
 */
export class RunStore implements RunRecords {
  readonly directory: string;
  readonly #records = new RunRecordIndex();
  readonly #indexFile: string;
  readonly #index: GroupedAppend;
  readonly #logger: Logger;
  /** Every state is written in turn: each status event finds its own state on disk. */
  readonly #writes: LatestFileWrites;
  readonly #storage: StorageGate | undefined;

  private constructor(options: RunStoreOptions) {
    this.directory = path.join(options.dataDirectory, "runs");
    this.#indexFile = path.join(this.directory, "index.jsonl");
    this.#index = new GroupedAppend(this.#indexFile);
    this.#logger = options.logger;
    this.#storage = options.storage;
    this.#writes = new LatestFileWrites({
      merge: false,
      ...(options.storage ? { storage: options.storage } : {}),
    });
  }

  /** Reads the index and every record it names. Unreadable lines and files are logged and skipped. */
  static open(options: RunStoreOptions): RunStore {
    const store = new RunStore(options);
    mkdirSync(store.directory, { recursive: true });
    for (const entry of store.#readIndex()) {
      const record = store.#readRecord(entry.run) ?? entry.record;
      if (!record) continue;
      store.#records.put(record);
    }
    return store;
  }

  /** Every run, oldest first. */
  all(): RunRecord[] {
    return this.#records.all();
  }

  get(id: string): RunRecord | undefined {
    return this.#records.get(id);
  }

  unfinishedOf(agentId: string): UnfinishedRuns {
    return this.#records.unfinishedOf(agentId);
  }

  findByIdempotencyKey(agentId: string, key: string): RunRecord | undefined {
    return this.#records.byIdempotencyKey(agentId, key);
  }

  queuedCount(): number {
    return this.#records.queued;
  }

  /** The newest run of an agent. */
  lastOf(agentId: string): RunRecord | undefined {
    return this.#records.lastOf(agentId);
  }

  /**
   * Registers a new run with one append of its whole record to the index, grouped with the other
   * runs created in the same turn of the event loop (200 runs started at once cost a few writes).
   * Resolves once the line is in the kernel (safe from kill -9); only then is the run listed, so
   * nothing reports a run that a crash could lose. `<run>.json` is written at its first change.
   */
  async create(record: RunRecord): Promise<void> {
    const entry: RunIndexEntry = {
      run: record.id,
      agent: record.agent,
      created_at: record.created_at,
      record,
    };
    try {
      await this.#index.append(JSON.stringify(entry));
    } catch (error) {
      this.#storage?.failed(error, this.#indexFile);
      throw error;
    }
    this.#records.put(record);
  }

  /**
   * Writes the record to disk atomically, off the event loop, and resolves once it is there (safe
   * from kill -9); only then is it the one `get` serves. Saves of one run land in the order made
   * (a newer state is never overwritten by an older one). A finished run's record is also flushed
   * to the device in the background, so its result survives a power loss too.
   */
  async save(record: RunRecord): Promise<void> {
    const file = this.#fileOf(record.id);
    await this.#writes.write(file, `${JSON.stringify(record, null, 2)}\n`, { sync: false });
    if (isTerminal(record.status)) {
      flushToDeviceLater(file, (error) =>
        this.#logger.warn({ err: error, file }, "could not fsync a run record"),
      );
    }
    this.#records.put(record);
  }

  /** Records and new runs accepted and not yet on disk (`GET /health`'s `pending_writes`). */
  get pendingWrites(): number {
    return this.#writes.size + this.#index.pending;
  }

  /** Resolves once every record saved so far is on disk (before the data folder is let go). */
  settled(): Promise<void> {
    return this.#writes.settled();
  }

  /** Closes the index (new runs appended meanwhile are written first). */
  close(): void {
    this.#index.close();
  }

  #fileOf(id: string): string {
    return path.join(this.directory, `${id}.json`);
  }

  #readIndex(): RunIndexEntry[] {
    if (!existsSync(this.#indexFile)) return [];
    const entries: RunIndexEntry[] = [];
    const text = readFileSync(this.#indexFile, "utf8");
    // A line torn by a crash is ended, so the next run's line does not join it.
    if (text !== "" && !text.endsWith("\n")) appendFileSync(this.#indexFile, "\n");
    const lines = text.split("\n");
    lines.forEach((line, index) => {
      if (line.trim() === "") return;
      const parsed = RunIndexEntrySchema.safeParse(parseJson(line));
      if (parsed.success) entries.push(parsed.data);
      else
        this.#logger.warn(
          { file: this.#indexFile, line: index + 1 },
          "skipping an unreadable run index line",
        );
    });
    return entries;
  }

  #readRecord(id: string): RunRecord | undefined {
    const file = this.#fileOf(id);
    // A run that never changed after it was created has only its index line.
    if (!existsSync(file)) return undefined;
    const parsed = RunRecordSchema.safeParse(parseJson(readFileSync(file, "utf8")));
    if (parsed.success) return parsed.data;
    this.#logger.warn({ file, issues: parsed.error.issues.slice(0, 3) }, "skipping an unreadable run record");
    return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
