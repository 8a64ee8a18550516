import { rm } from "node:fs/promises";
import { replaceFile } from "./replace-file.js";
import type { StorageGate } from "./storage-gate.js";

export interface LatestWriteOptions {
  /** Flush the temp file to the device before the rename (power-loss safe); default true. */
  sync?: boolean;
}

/** What a file is to become: new content, or gone. */
type Change = { kind: "write"; text: string; sync: boolean } | { kind: "remove" };

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface QueuedChange {
  change: Change;
  /** Whoever asked for it, or for a change merged into it. */
  waiters: Waiter[];
}

interface FileQueue {
  /** The change being written now. */
  current: Change;
  /** The changes asked for meanwhile, oldest first (one at most when merging). */
  next: QueuedChange[];
}

export interface LatestFileWritesOptions {
  /**
   * Merge the changes waiting for a file into the newest (default true): only the newest content
   * is written. False writes every content in turn, for files whose every state must reach disk
   * before it is reported.
   */
  merge?: boolean;
  /**
   * Told of every write; a write that fails for lack of space waits for room and is tried again
   * (its callers wait too: nothing is reported before it is on disk) instead of failing.
   */
  storage?: StorageGate;
}

/**
 * Atomic file replacements done off the event loop (replaceFile: a temp file beside the target,
 * renamed over it, so a crash leaves the old or the new content, never a torn file). Writes of one file run one
 * at a time, in the order asked, so an older content never lands after a newer one; a change asked
 * for while another is under way waits for it, and several waiting are merged into the newest
 * unless `merge: false` (their callers all resolve when it lands). A promise resolves once its
 * content (or a newer one) is in the kernel: safe from kill -9.
 */
export class LatestFileWrites {
  readonly #queues = new Map<string, FileQueue>();
  readonly #settledWaiters = new Set<() => void>();
  readonly #merge: boolean;
  readonly #storage: StorageGate | undefined;

  constructor(options: LatestFileWritesOptions = {}) {
    this.#merge = options.merge ?? true;
    this.#storage = options.storage;
  }

  /** Replaces `file` with `text`; resolves once it (or a newer content) is in place. */
  write(file: string, text: string, options: LatestWriteOptions = {}): Promise<void> {
    return this.#enqueue(file, { kind: "write", text, sync: options.sync ?? true });
  }

  /** Deletes `file` after the writes asked before; resolves once it is gone. */
  remove(file: string): Promise<void> {
    return this.#enqueue(file, { kind: "remove" });
  }

  /**
   * What `file` is about to hold while a change of it is under way: its newest content, null when
   * it is being removed, undefined when nothing is under way (the file on disk is current).
   */
  pending(file: string): string | null | undefined {
    const queue = this.#queues.get(file);
    if (!queue) return undefined;
    const change = queue.next.at(-1)?.change ?? queue.current;
    return change.kind === "write" ? change.text : null;
  }

  /** Files with a change under way. */
  get size(): number {
    return this.#queues.size;
  }

  /** Resolves once no change of any file is under way. */
  settled(): Promise<void> {
    if (this.#queues.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.add(resolve));
  }

  #enqueue(file: string, change: Change): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      const queue = this.#queues.get(file);
      if (!queue) {
        this.#queues.set(file, { current: change, next: [] });
        void this.#drain(file, { change, waiters: [waiter] });
        return;
      }
      const last = queue.next.at(-1);
      if (this.#merge && last) {
        last.change = mergeChanges(last.change, change);
        last.waiters.push(waiter);
      } else queue.next.push({ change, waiters: [waiter] });
    });
  }

  async #drain(file: string, first: QueuedChange): Promise<void> {
    for (let queued: QueuedChange | undefined = first; queued;) {
      try {
        await this.#applyWhenRoom(file, queued.change);
        for (const waiter of queued.waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of queued.waiters) waiter.reject(error);
      }
      const queue = this.#queues.get(file);
      queued = queue?.next.shift();
      if (queue && queued) queue.current = queued.change;
    }
    this.#queues.delete(file);
    if (this.#queues.size === 0) {
      for (const resolve of [...this.#settledWaiters]) resolve();
      this.#settledWaiters.clear();
    }
  }

  /** Applies the change; one that fails for lack of space is tried again once the store has room. */
  async #applyWhenRoom(file: string, change: Change): Promise<void> {
    for (;;) {
      try {
        await apply(file, change);
        this.#storage?.succeeded();
        return;
      } catch (error) {
        const bytes = change.kind === "write" ? Buffer.byteLength(change.text) : 0;
        if (!this.#storage?.failed(error, file, bytes)) throw error;
        // Rejects when the store closes while still full: the write is given up then.
        await this.#storage.whenWritable().catch(() => Promise.reject(error));
      }
    }
  }
}

/** The newer change wins; a write merged with an older one asking for an fsync keeps the fsync. */
function mergeChanges(older: Change, newer: Change): Change {
  if (newer.kind === "write" && older.kind === "write" && older.sync) return { ...newer, sync: true };
  return newer;
}

async function apply(file: string, change: Change): Promise<void> {
  if (change.kind === "remove") await rm(file, { force: true });
  else await replaceFile(file, change.text, { sync: change.sync });
}
