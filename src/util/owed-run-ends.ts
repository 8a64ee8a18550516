import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { errnoCodeOf } from "./errno-code.js";
import { GroupedAppend } from "./grouped-append.js";
import { readRegularFileSync } from "./read-regular-file.js";
import { replaceFileSync } from "./replace-file.js";
import type { StorageGate } from "./storage-gate.js";

/** The journal is begun afresh from the runs still owed once it holds this many lines. */
const MAX_LINES = 2_000;

const OwedLineSchema = z.union([
  z.object({ owed: z.string(), node: z.string().optional() }),
  z.object({ done: z.string() }),
]);

/** A run owed its follow-ups, with the node id the daemon had when it marked it (a cluster's). */
export interface OwedRun {
  run: string;
  node?: string | undefined;
}

/**
 * Runs whose end still owes follow-ups (deliveries, `after` triggers' runs), one journal file per
 * kind in data_dir: a run is marked owed as soon as it is known (its first status, long before its
 * end can be recorded) and done once its follow-ups are decided and stored. A daemon killed between
 * a run's end and its follow-ups finds the run still owed at its next start, and decides them then:
 * only the runs in this file are looked at, never the history. A `done` line lost to a kill only
 * means the run is decided again, which the follow-ups make a no-op (their own keys).
 *
 * Its writes go through the store's storage gate as the other data_dir writes do: one refused for
 * lack of room makes the store full (the daemon says so and refuses new runs), and once it has room
 * again the file is begun afresh from the runs owed then, the marks made meanwhile included.
 */
export class OwedRunEnds {
  readonly #file: string;
  /** Owed run → the node id it was marked under. */
  readonly #owed = new Map<string, string | undefined>();
  readonly #node: string | undefined;
  readonly #storage: StorageGate | undefined;
  #append: GroupedAppend | undefined;
  #lines = 0;
  /** A write was refused for lack of room: the file is begun afresh once the store has room. */
  #waitingForRoom = false;
  #closed = false;

  /**
   * `node`: this daemon's id in a cluster, written with each run it marks. `storage`: the store's
   * gate (files store), told of the writes that fail for lack of room.
   */
  constructor(file: string, node?: string | undefined, storage?: StorageGate | undefined) {
    this.#file = file;
    this.#node = node;
    this.#storage = storage;
  }

  /** Reads the runs left owed at the last stop and begins the file afresh with them alone. */
  load(): OwedRun[] {
    for (const line of readJournal(this.#file).split("\n")) {
      if (line.trim() === "") continue;
      const parsed = OwedLineSchema.safeParse(parseLine(line));
      if (!parsed.success) continue;
      if ("owed" in parsed.data) this.#owed.set(parsed.data.owed, parsed.data.node);
      else this.#owed.delete(parsed.data.done);
    }
    try {
      this.#rewrite();
    } catch (error) {
      // No room to begin the file afresh: begun once there is, the runs read still given back.
      if (!this.#refusedForRoom(error)) throw error;
    }
    return [...this.#owed].map(([run, node]) => ({ run, node }));
  }

  /** Whether the run is owed follow-ups. */
  has(run: string): boolean {
    return this.#owed.has(run);
  }

  /** Marks the run owed (once); its line is in the kernel by the end of this turn of the event loop. */
  owe(run: string): void {
    if (this.#owed.has(run)) return;
    this.#owed.set(run, this.#node);
    this.#write(this.#node === undefined ? { owed: run } : { owed: run, node: this.#node });
  }

  /** Marks the run's follow-ups decided. */
  done(run: string): void {
    if (!this.#owed.delete(run)) return;
    this.#write({ done: run });
  }

  close(): void {
    this.#closed = true;
    this.#append?.close();
    this.#append = undefined;
  }

  #write(line: z.infer<typeof OwedLineSchema>): void {
    // The file is begun afresh from the runs owed once the store has room: this mark is in them.
    if (this.#waitingForRoom || this.#closed) return;
    if (this.#lines >= MAX_LINES) this.#tryRewrite();
    if (this.#waitingForRoom) return;
    this.#lines += 1;
    const text = JSON.stringify(line);
    // Not awaited: the run goes on; a line refused is made good by the rewrite once there is room.
    void (this.#append ??= new GroupedAppend(this.#file)).append(text).then(
      () => this.#storage?.succeeded(),
      (error: unknown) => {
        // Another failure: the file is begun afresh at the next write.
        if (!this.#refusedForRoom(error, Buffer.byteLength(text) + 1)) this.#lines = MAX_LINES;
      },
    );
  }

  /** Begins the file afresh; one refused for lack of room is tried again once there is room. */
  #tryRewrite(): void {
    try {
      this.#rewrite();
      this.#storage?.succeeded();
    } catch (error) {
      // Another failure (the disk gone, say): the lines go on being appended to the file as it is.
      this.#refusedForRoom(error);
    }
  }

  /**
   * Tells the storage gate of a failed write; true when it failed for lack of room, and then the
   * file is begun afresh (from the runs owed by then) once the store is writable again.
   */
  #refusedForRoom(error: unknown, bytes?: number): boolean {
    const storage = this.#storage;
    if (storage === undefined || !storage.failed(error, this.#file, bytes)) return false;
    if (this.#waitingForRoom) return true;
    this.#waitingForRoom = true;
    this.#append?.close();
    this.#append = undefined;
    storage.whenWritable().then(
      () => {
        this.#waitingForRoom = false;
        if (!this.#closed) this.#tryRewrite();
      },
      // The store closed while still full: the daemon stops; the marks since are lost with it.
      () => undefined,
    );
    return true;
  }

  #rewrite(): void {
    this.#append?.close();
    this.#append = undefined;
    mkdirSync(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    const text = [...this.#owed]
      .map(([run, node]) => `${JSON.stringify(node === undefined ? { owed: run } : { owed: run, node })}\n`)
      .join("");
    replaceFileSync(this.#file, text);
    this.#lines = this.#owed.size;
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The journal's text; empty when there is none yet. Anything but a regular file in its place (a
 * FIFO would hold the start for ever) is refused with STORE_CORRUPT naming it.
 */
function readJournal(file: string): string {
  try {
    return readRegularFileSync(file);
  } catch (error) {
    if (errnoCodeOf(error) === "ENOENT") return "";
    throw error;
  }
}
