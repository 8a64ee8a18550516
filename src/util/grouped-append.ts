import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";

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
 * in the kernel (safe from kill -9), or rejects with the write's error.
 */
export class GroupedAppend {
  readonly #file: string;
  #pending: PendingLine[] = [];
  #scheduled = false;
  #descriptor: number | undefined;
  /** A write failed: it may have left part of a line, which the next write ends first. */
  #mayBeTorn = false;

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
    this.#descriptor ??= openSync(this.#file, "a", 0o600);
    const data = Buffer.from(this.#mayBeTorn ? `\n${text}` : text);
    let written = 0;
    try {
      // A regular file takes the whole buffer at once but on a full disk; the loop covers the rest.
      while (written < data.length) written += writeSync(this.#descriptor, data, written);
      this.#mayBeTorn = false;
    } catch (error) {
      this.#mayBeTorn = written > 0 && !cutBack(this.#descriptor, written);
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

/** Cuts the last `written` bytes (part of a batch) off again; false when that failed too. */
function cutBack(descriptor: number, written: number): boolean {
  try {
    ftruncateSync(descriptor, fstatSync(descriptor).size - written);
    return true;
  } catch {
    return false;
  }
}
