import path from "node:path";

/** Entries (files and folders, at every depth) one watch trigger keeps watched at most. */
export const MAX_WATCHED_ENTRIES = 10_000;

/**
 * The entries of one watched folder that its watcher may track, at most `max`: a process that can
 * write into the folder (a sandboxed agent) could otherwise create millions of files, and the
 * watcher keeps a few KB per entry and stats each, in the daemon. An entry seen once stays
 * admitted until it is removed; past the bound new entries are ignored, and `overflowed` reports
 * it once per time the folder goes over.
 */
export class WatchEntryBound {
  readonly #max: number;
  readonly #admitted = new Set<string>();
  #over = false;

  constructor(max: number) {
    this.#max = max;
  }

  /** Whether the watcher may track `file`; false past the bound (and `onOverflow` the first time). */
  admit(file: string, onOverflow: () => void): boolean {
    if (this.#admitted.has(file)) return true;
    if (this.#admitted.size < this.#max) {
      this.#admitted.add(file);
      return true;
    }
    if (!this.#over) {
      this.#over = true;
      onOverflow();
    }
    return false;
  }

  /** `file` (and, for a folder, everything below it) was removed: room for new entries. */
  forget(file: string): void {
    this.#admitted.delete(file);
    const below = `${file}${path.sep}`;
    for (const entry of this.#admitted) if (entry.startsWith(below)) this.#admitted.delete(entry);
    if (this.#admitted.size < this.#max) this.#over = false;
  }
}
