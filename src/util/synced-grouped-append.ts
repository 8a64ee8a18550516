import { closeSync, fdatasync, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import path from "node:path";
import { storeWriteFailed, WholeAppends } from "./whole-append.js";

interface PendingLine {
  file: string;
  text: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The file kept open, and its size where this writer's last line ended (undefined: not known). */
interface OpenFile {
  file: string;
  descriptor: number;
  endedAt: number | undefined;
}

/**
 * Append-only files (such as one per day) written by group commit and flushed to the device: the
 * lines appended during one turn of the event loop go out in one `write` on a descriptor kept open,
 * then one `fdatasync` on libuv's threads, and each `append` resolves once its line is on the
 * device. While a flush is under way the next lines gather for the one after it. Nothing blocks the
 * event loop on the disk: 20 entries at once cost one write and one flush, not 20 opens and 20
 * fsyncs made on the loop. The files are opened in append mode, so other processes may append
 * whole lines to them too; a line another writer left torn (a crash mid-write) is ended before the
 * next group, so it stays a line of its own. A failed write is cut back (WholeAppends) and rejects
 * its group. Folders are made (0700) at a file's first open; files are 0600.
 */
export class SyncedGroupedAppend {
  #pending: PendingLine[] = [];
  #scheduled = false;
  #flushing: Promise<void> | undefined;
  #open: OpenFile | undefined;
  #closed = false;
  readonly #whole = new WholeAppends();

  /** Appends `line` (a newline is added) to `file`; resolves once it is on the device. */
  append(file: string, line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ file, text: `${line}\n`, resolve, reject });
      this.#schedule();
    });
  }

  /** Writes and flushes what is pending, then closes the file kept open (a later append opens it again). */
  async close(): Promise<void> {
    this.#closed = true;
    for (;;) {
      if (!this.#flushing && this.#pending.length > 0) this.#startFlush();
      const flushing = this.#flushing;
      if (flushing === undefined) break;
      await flushing;
      // #startFlush clears the field before this await resumes. Were it ever left set, awaiting the
      // settled promise again would loop in microtasks for good: 100% CPU, and no timer or signal
      // handler ran again, so the daemon never finished its shutdown (a bad-day test saw it).
      if (this.#flushing === flushing) this.#flushing = undefined;
    }
    this.#release();
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    // Lines appended by the other requests handled in this turn join the same write.
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#flushing || this.#pending.length === 0) return;
      this.#startFlush();
    });
  }

  /**
   * Runs a flush and clears #flushing once it is over. The clearing waits for a turn of its own: a
   * group that fails at its open or write settles before the flush's first await, and clearing the
   * field from inside #flush would run before it was set, leaving it set for good (every later
   * append then waited for ever: a daemon whose audit folder could not be written answered no more
   * run starts).
   */
  #startFlush(): void {
    const flushing = this.#flush().then(() => {
      this.#flushing = undefined;
      if (this.#closed && this.#pending.length === 0) this.#release();
      if (this.#pending.length > 0) this.#schedule();
    });
    this.#flushing = flushing;
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    // In order, a file at a time (a group spans two files only when the day turns).
    for (let start = 0; start < batch.length;) {
      const file = batch[start]?.file;
      let end = start;
      while (end < batch.length && batch[end]?.file === file) end += 1;
      const group = batch.slice(start, end);
      start = end;
      if (file === undefined) continue;
      try {
        const { open, size } = this.#openFile(file);
        const { descriptor } = open;
        // Still where this writer's last line ended: no other writer left a torn line since.
        const lead = size !== open.endedAt && endsTorn(descriptor, size) ? "\n" : "";
        const data = Buffer.from(lead + group.map((line) => line.text).join(""));
        open.endedAt = undefined;
        this.#whole.append(file, descriptor, data);
        open.endedAt = size + data.length;
        await datasync(file, descriptor);
      } catch (error) {
        this.#release();
        for (const line of group) line.reject(error);
        continue;
      }
      for (const line of group) line.resolve();
    }
  }

  /**
   * The file kept open for `file`, opened anew when it is another file or was deleted since, and its
   * size now (one `fstat` serves both questions).
   */
  #openFile(file: string): { open: OpenFile; size: number } {
    const open = this.#open;
    if (open?.file === file) {
      const stats = fstatSync(open.descriptor);
      if (stats.nlink > 0) return { open, size: stats.size };
    }
    this.#release();
    let descriptor: number;
    try {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      descriptor = openSync(file, "a+", 0o600);
    } catch (error) {
      throw storeWriteFailed(file, error);
    }
    const opened: OpenFile = { file, descriptor, endedAt: undefined };
    this.#open = opened;
    return { open: opened, size: fstatSync(descriptor).size };
  }

  #release(): void {
    if (!this.#open) return;
    try {
      closeSync(this.#open.descriptor);
    } catch {
      // Already gone: nothing is left to flush through it.
    }
    this.#open = undefined;
  }
}

function datasync(file: string, descriptor: number): Promise<void> {
  return new Promise((resolve, reject) =>
    fdatasync(descriptor, (error) => (error ? reject(storeWriteFailed(file, error)) : resolve())),
  );
}

/** Whether the file's last byte (of `size`) is not a newline (a line cut short). */
function endsTorn(descriptor: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(descriptor, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}
