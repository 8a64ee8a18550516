import { closeSync, openSync } from "node:fs";
import { storeWriteFailed, WholeAppends } from "../util/whole-append.js";
import { LOG_APPEND_FLAGS } from "./damaged-log-file.js";

/** Open agent logs kept at most: a daemon with thousands of agents stays well under the fd limit. */
const DEFAULT_MAX_OPEN = 128;

/**
 * Append-only log files kept open between writes. Opening a file for every event cost more than
 * the write itself (open, write, close per line); with the descriptor kept, an event is one
 * `write` — still synchronous, so the line is in the kernel (safe from kill -9) when `append`
 * returns. The least recently used descriptor is closed beyond `maxOpen`. An append lands whole or
 * not at all (see WholeAppends): a write the disk cut short is cut back before `append` throws.
 */
export class OpenLogFiles {
  readonly #descriptors = new Map<string, number>();
  readonly #maxOpen: number;
  readonly #whole = new WholeAppends();

  constructor(maxOpen = DEFAULT_MAX_OPEN) {
    this.#maxOpen = maxOpen;
  }

  /**
   * Appends `text` (a string, or its UTF-8 bytes) to `file`, creating it (0600) when missing, and
   * returns the bytes appended (for `cutBack`). Throws STORE_WRITE_FAILED, the file left as it was.
   */
  append(file: string, text: string | Buffer): number {
    let descriptor = this.#descriptors.get(file);
    if (descriptor === undefined) {
      try {
        descriptor = openSync(file, LOG_APPEND_FLAGS, 0o600);
      } catch (error) {
        throw storeWriteFailed(file, error);
      }
      if (this.#descriptors.size >= this.#maxOpen) this.#closeOldest();
    } else {
      // Most recently used last: re-insert.
      this.#descriptors.delete(file);
    }
    this.#descriptors.set(file, descriptor);
    const data = typeof text === "string" ? Buffer.from(text) : text;
    try {
      this.#whole.append(file, descriptor, data);
      return data.length;
    } catch (error) {
      this.close(file);
      throw error;
    }
  }

  /**
   * Takes back the last `bytes` appended to `file` (the other half of an event whose second write
   * failed; nothing was appended after them). Never throws: a cut that fails is made before the
   * next append.
   */
  cutBack(file: string, bytes: number): void {
    let descriptor = this.#descriptors.get(file);
    try {
      descriptor ??= openSync(file, LOG_APPEND_FLAGS, 0o600);
    } catch {
      // Remembered: the next append opens the file and cuts it first.
    }
    if (descriptor === undefined) return this.#whole.markTorn(file, bytes);
    this.#whole.cutBackBy(file, descriptor, bytes);
    if (!this.#descriptors.has(file)) closeSync(descriptor);
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
