import { mkdir, open, readdir } from "node:fs/promises";
import path from "node:path";
import { clearTimeout, setTimeout } from "node:timers";

/** Spares kept ready: schedules.json takes one per timer wake that changed it. */
const DEFAULT_COUNT = 4;

/**
 * Empty files made ahead, off the event loop, for atomic writes to use as their temp file.
 * Creating a file is what an atomic replace pays most for on a journaling disk (about 1 ms, against
 * tens of microseconds to write one that exists and rename it): with a spare ready, a write on the
 * event loop creates no file. The folder holds spares only; those left by a crash are taken again
 * (a write truncates what it takes). It must be on the same file system as the files written.
 *
 * `schedules.json` takes its temp files here: its rewrite stays synchronous on purpose (a fire is on
 * disk before its run is created, so a crash can never make a restart run that fire again), and
 * without a spare it would create a file on the event loop at every timer wake (about 1 ms each on
 * a journaling disk). New runs' event logs take theirs from a folder of their own (FileEventLog):
 * a launch renames one into place instead of waiting for a file's creation on libuv's threads.
 */
export class SpareFiles {
  readonly #directory: string;
  readonly #count: number;
  readonly #ready: string[] = [];
  readonly #creating = new Set<Promise<void>>();
  /** Leftovers are listed once, before any spare is made (the listing would see those too). */
  #leftovers: "unlisted" | "listing" | "listed" = "unlisted";
  #closed = false;
  #next = 0;
  readonly #refillDelay: number;
  #refillTimer: NodeJS.Timeout | undefined;

  /**
   * `refillDelayMilliseconds`: how long after a take the spares taken are made again (0: at once).
   * A delay keeps their creation off libuv's threads and the cores while the takers' work that
   * matters goes on (the first model requests of the runs launched together).
   */
  constructor(directory: string, count = DEFAULT_COUNT, refillDelayMilliseconds = 0) {
    this.#directory = directory;
    this.#count = count;
    this.#refillDelay = refillDelayMilliseconds;
  }

  /** An empty file to write and rename over the target, or undefined when none is ready yet. */
  take(): string | undefined {
    const file = this.#ready.pop();
    if (this.#refillDelay === 0) this.#refill();
    else
      this.#refillTimer ??= setTimeout(() => {
        this.#refillTimer = undefined;
        this.#refill();
      }, this.#refillDelay).unref();
    return file;
  }

  /** Makes the spares now (at start, so that the first takes find some ready). */
  prepare(): void {
    this.#refill();
  }

  /** Stops making spares and waits for those under way (before the data folder may be removed). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#refillTimer);
    this.#refillTimer = undefined;
    while (this.#creating.size > 0) await Promise.all(this.#creating);
  }

  #refill(): void {
    if (this.#closed || this.#leftovers === "listing") return;
    if (this.#leftovers === "unlisted") {
      this.#leftovers = "listing";
      this.#track(this.#adoptLeftovers(), (listed) => {
        this.#leftovers = "listed";
        if (listed) this.#refill();
      });
      return;
    }
    while (this.#ready.length + this.#creating.size < this.#count) this.#track(this.#create());
  }

  #track(work: Promise<boolean>, then?: (succeeded: boolean) => void): void {
    const tracked: Promise<void> = work.then((succeeded) => {
      this.#creating.delete(tracked);
      then?.(succeeded);
    });
    this.#creating.add(tracked);
  }

  /** Spares ready to take now. */
  get ready(): number {
    return this.#ready.length;
  }

  /** The first refill: makes the folder and takes the spares a previous process left. */
  async #adoptLeftovers(): Promise<boolean> {
    try {
      await mkdir(this.#directory, { recursive: true, mode: 0o700 });
      for (const name of await readdir(this.#directory)) this.#ready.push(path.join(this.#directory, name));
      return true;
    } catch {
      return false; // No spares: writes create their temp files themselves.
    }
  }

  async #create(): Promise<boolean> {
    const file = path.join(this.#directory, `${process.pid}-${this.#next++}.spare`);
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.close();
    } catch {
      return false; // A full disk or a removed folder: writes create their temp files themselves.
    }
    this.#ready.push(file);
    return true;
  }
}
