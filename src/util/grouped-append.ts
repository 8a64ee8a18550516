import { closeSync, openSync } from "node:fs";
import { storeWriteFailed, WholeAppends } from "./whole-append.js";

/** Callers released per tick once their lines are written. */
const RELEASE_SLICE = 16;

interface PendingLine {
  text: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * An append-only file written by group commit: the lines appended during one turn of the event loop
 * go out together in one `write` at the end of that turn, on a descriptor kept open, so 200 lines
 * asked for at once cost a few `write`s instead of 200 `open`/`write`/`close`s. The write is made on
 * the event loop: a kept descriptor's append into the page cache takes microseconds, where a round
 * trip through libuv's threads (queued behind whatever else they do) made each caller wait
 * milliseconds. Lines land in the order they were appended. Each `append` resolves once its line is
 * in the kernel (safe from kill -9), or rejects with STORE_WRITE_FAILED: a write that failed (the
 * disk full mid-line) is cut back to where it started, so its lines are absent, never half there,
 * and the next write starts on a clean line (see WholeAppends).
 */
export class GroupedAppend {
  readonly #file: string;
  #pending: PendingLine[] = [];
  #scheduled = false;
  #descriptor: number | undefined;
  readonly #whole = new WholeAppends();

  constructor(file: string) {
    this.#file = file;
  }

  /** Lines appended and not yet in the kernel. */
  get pending(): number {
    return this.#pending.length;
  }

  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ text: `${line}\n`, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // Lines appended by the other requests handled in this turn join the same write.
      setImmediate(() => this.#writePending());
    });
  }

  /** Closes the file; lines appended and not written yet are written first. */
  close(): void {
    this.#writePending();
    if (this.#descriptor === undefined) return;
    closeSync(this.#descriptor);
    this.#descriptor = undefined;
  }

  #writePending(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    try {
      this.#write(batch.map((line) => line.text).join(""));
    } catch (error) {
      for (const line of batch) line.reject(error);
      return;
    }
    this.#release(batch);
  }

  #write(text: string): void {
    try {
      this.#descriptor ??= openSync(this.#file, "a", 0o600);
    } catch (error) {
      throw storeWriteFailed(this.#file, error);
    }
    try {
      this.#whole.append(this.#file, this.#descriptor, Buffer.from(text));
    } catch (error) {
      closeSync(this.#descriptor);
      this.#descriptor = undefined;
      throw error;
    }
  }

  /**
   * What each caller does next (publish, answer a request) runs in the ticks the lines are released
   * in: a slice at a time, so 200 callers at once do not hold the event loop together.
   */
  #release(batch: PendingLine[]): void {
    for (const line of batch.slice(0, RELEASE_SLICE)) line.resolve();
    const rest = batch.slice(RELEASE_SLICE);
    if (rest.length === 0) return;
    setImmediate(() => this.#release(rest));
  }
}
