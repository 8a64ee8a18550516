import { appendFile } from "node:fs/promises";

/** Callers released per tick once their lines are written. */
const RELEASE_SLICE = 16;

interface PendingLine {
  text: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * An append-only file written by group commit: lines appended while a write is under way go out
 * together in the next one, so 200 lines asked for at once cost a couple of `write`s instead of
 * 200, and the event loop never waits for the disk. Writes run one at a time, so lines land in the
 * order they were appended. Each `append` resolves once its line is in the kernel (safe from
 * kill -9), or rejects with the write's error.
 */
export class GroupedAppend {
  readonly #file: string;
  #pending: PendingLine[] = [];
  #writing = false;
  /** Lines of the write under way. */
  #inFlight = 0;

  constructor(file: string) {
    this.#file = file;
  }

  /** Lines appended and not yet in the kernel. */
  get pending(): number {
    return this.#pending.length + this.#inFlight;
  }

  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ text: `${line}\n`, resolve, reject });
      if (this.#writing) return;
      this.#writing = true;
      // Lines appended in this same tick join the first write.
      queueMicrotask(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      this.#inFlight = batch.length;
      try {
        await appendFile(this.#file, batch.map((line) => line.text).join(""), { mode: 0o600 });
      } catch (error) {
        for (const line of batch) line.reject(error);
        continue;
      } finally {
        this.#inFlight = 0;
      }
      // What each caller does next (publish, answer a request) runs in the ticks the lines are
      // released in: a slice at a time, so 200 callers at once do not hold the event loop together.
      for (let start = 0; start < batch.length; start += RELEASE_SLICE) {
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        for (const line of batch.slice(start, start + RELEASE_SLICE)) line.resolve();
      }
    }
    this.#writing = false;
  }
}
