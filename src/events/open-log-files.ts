import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";

/** Open agent logs kept at most: a daemon with thousands of agents stays well under the fd limit. */
const DEFAULT_MAX_OPEN = 128;

/**
 * Append-only log files kept open between writes. Opening a file for every event cost more than
 * the write itself (open, write, close per line); with the descriptor kept, an event is one
 * `write` — still synchronous, so the line is in the kernel (safe from kill -9) when `append`
 * returns. The least recently used descriptor is closed beyond `maxOpen`.
 */
export class OpenLogFiles {
  readonly #descriptors = new Map<string, number>();
  readonly #maxOpen: number;

  constructor(maxOpen = DEFAULT_MAX_OPEN) {
    this.#maxOpen = maxOpen;
  }

  /** Appends `text` to `file`, creating it (0600) when missing. Throws what the file system throws. */
  append(file: string, text: string): void {
    let descriptor = this.#descriptors.get(file);
    if (descriptor === undefined) {
      descriptor = openSync(file, "a", 0o600);
      if (this.#descriptors.size >= this.#maxOpen) this.#closeOldest();
    } else {
      // Most recently used last: re-insert.
      this.#descriptors.delete(file);
    }
    this.#descriptors.set(file, descriptor);
    const data = Buffer.from(text);
    let written = 0;
    try {
      // A full disk takes part of a line and refuses the rest: the rest's write throws why.
      while (written < data.length) written += writeSync(descriptor, data, written);
    } catch (error) {
      // The part written is cut off again: a line is whole on disk or absent.
      if (written > 0) ftruncateSync(descriptor, fstatSync(descriptor).size - written);
      this.close(file);
      throw error;
    }
  }

  /**
   * Keeps a descriptor opened elsewhere (off the event loop, `"a"` mode) for `file`'s next appends.
   * A file that already has one keeps its own and the new descriptor is closed.
   */
  adopt(file: string, descriptor: number): void {
    if (this.#descriptors.has(file)) {
      closeSync(descriptor);
      return;
    }
    if (this.#descriptors.size >= this.#maxOpen) this.#closeOldest();
    this.#descriptors.set(file, descriptor);
  }

  /** Closes one file's descriptor (a run's log when the run ends). */
  close(file: string): void {
    const descriptor = this.#descriptors.get(file);
    if (descriptor === undefined) return;
    this.#descriptors.delete(file);
    closeSync(descriptor);
  }

  closeAll(): void {
    for (const file of [...this.#descriptors.keys()]) this.close(file);
  }

  #closeOldest(): void {
    const oldest = this.#descriptors.keys().next();
    if (!oldest.done) this.close(oldest.value);
  }
}
