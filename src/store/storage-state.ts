import path from "node:path";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import { type SpaceFailure, spaceFailureOf, type StorageGate } from "../util/storage-gate.js";

/** Default time between two probes while the store is full (config `store.probe_interval`). */
export const DEFAULT_PROBE_INTERVAL_MILLISECONDS = 5_000;

/** Why the store cannot write: the space failure met first in the episode, and since when. */
export interface StorageFullReason extends SpaceFailure {
  since: string;
}

/** One entry of `GET /health`'s `reasons` while the store is full. */
export interface StorageHealthReason {
  code: "STORAGE_FULL";
  message: string;
  /** The errno or SQLSTATE the write failed with: ENOSPC, EDQUOT, EROFS, 53100, … */
  error: string;
  file?: string;
  since: string;
}

/** What the API reads of the storage state: refuse new runs while full, and say why. */
export interface StorageStatus {
  readonly full: boolean;
  /** Episodes of a full store since the start. */
  readonly episodes: number;
  readonly reason: StorageFullReason | undefined;
  healthReasons(): StorageHealthReason[];
  /**
   * Tells of a write a request could not make (a token, a memory, an agent switch): one refused for
   * lack of room makes the store full, as an event's would. True when it was such a failure.
   */
  failed(error: unknown, file?: string): boolean;
}

export interface StorageStateOptions {
  /**
   * A write of at least `bytes` and its removal (a file in data_dir, a row); resolves when it went
   * through. Tried every `probeIntervalMilliseconds` while the store is full, with `bytes` the
   * largest write that failed in the episode.
   */
  probe: (bytes: number) => Promise<void>;
  probeIntervalMilliseconds?: number;
  /** data_dir: files in it are named relative to it in the health reasons (no path of the host). */
  root?: string;
  logger: Logger;
  now?: () => Date;
}

type StorageListener = (full: boolean) => void;

/**
 * Whether the store can write. A write that fails for lack of space (or quota, or a read-only
 * remount) makes it `full`, with the reason (error code, file); writers then hold what they could
 * not write and wait (`whenWritable`). While full, a probe (a small write and its removal) runs
 * every few seconds, and at once when another write goes through; the probe's success ends the
 * episode, and every listener hears of it (held events are written, paused runs go on, queued runs launch). Each
 * episode is logged once when it starts (warn) and once when it ends (info).
 */
export class StorageState implements StorageGate, StorageStatus {
  readonly #probe: (bytes: number) => Promise<void>;
  readonly #root: string | undefined;
  readonly #probeIntervalMilliseconds: number;
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #listeners = new Set<StorageListener>();
  #reason: StorageFullReason | undefined;
  /** The largest write that failed for lack of space in this episode: the probe asks for that much. */
  #neededBytes = 0;
  #writableWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #closed = false;
  #episodes = 0;

  constructor(options: StorageStateOptions) {
    this.#probe = options.probe;
    this.#root = options.root;
    this.#probeIntervalMilliseconds =
      options.probeIntervalMilliseconds ?? DEFAULT_PROBE_INTERVAL_MILLISECONDS;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  get full(): boolean {
    return this.#reason !== undefined;
  }

  /** Why the store is full, while it is. */
  get reason(): StorageFullReason | undefined {
    return this.#reason;
  }

  /** Episodes of a full store since the start (the metric `agentd_storage_full_episodes_total`). */
  get episodes(): number {
    return this.#episodes;
  }

  failed(error: unknown, file?: string, bytes = 0): boolean {
    const failure = spaceFailureOf(error);
    if (!failure) return false;
    // A held write larger than the probe would pass a probe it cannot pass itself: the episode
    // would end and start again at every probe (an event of 1 MB with 500 KB free).
    this.#neededBytes = Math.max(this.#neededBytes, bytes);
    if (this.#reason) return true;
    const reason: StorageFullReason = {
      ...failure,
      ...(failure.file === undefined && file !== undefined ? { file } : {}),
      since: this.#now().toISOString(),
    };
    this.#reason = reason;
    this.#episodes += 1;
    this.#logger.warn(
      { error: reason.code, file: reason.file, err: error },
      `the store is full (${reason.code}): new runs are refused (507 STORAGE_FULL) and running runs wait until space returns; ${remedyOf(reason.code)}`,
    );
    this.#scheduleProbe();
    this.#tell(true);
    return true;
  }

  /**
   * A write went through while the store is full: the probe runs now rather than at its time (a
   * few bytes freed let a line through, so the episode ends only once the probe has its room too:
   * no flapping between full and not).
   */
  succeeded(): void {
    if (!this.#reason || this.#probing || this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    void this.#runProbe();
  }

  #recovered(): void {
    const reason = this.#reason;
    if (!reason) return;
    this.#reason = undefined;
    this.#neededBytes = 0;
    const seconds = (this.#now().getTime() - Date.parse(reason.since)) / 1_000;
    this.#logger.info(
      { error: reason.code, file: reason.file, full_seconds: Math.max(0, seconds) },
      "the store can write again: held writes go out, runs go on",
    );
    const waiters = this.#writableWaiters;
    this.#writableWaiters = [];
    for (const waiter of waiters) waiter.resolve();
    this.#tell(false);
  }

  whenWritable(): Promise<void> {
    if (!this.#reason) return Promise.resolve();
    if (this.#closed) return Promise.reject(this.#closedError());
    return new Promise((resolve, reject) => this.#writableWaiters.push({ resolve, reject }));
  }

  /** Hears `true` when an episode starts and `false` when it ends; returns the unsubscribe. */
  onChange(listener: StorageListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `GET /health`'s reasons: one while the store is full, none otherwise. */
  healthReasons(): StorageHealthReason[] {
    const reason = this.#reason;
    if (!reason) return [];
    const file = this.#shown(reason.file);
    const where = file === undefined ? "" : ` writing ${file}`;
    return [
      {
        code: "STORAGE_FULL",
        message: `the store cannot write (${reason.code}${where}); new runs are refused until space returns`,
        error: reason.code,
        ...(file === undefined ? {} : { file }),
        since: reason.since,
      },
    ];
  }

  /** A file of data_dir relative to it; another file by its name only (GET /health is public). */
  #shown(file: string | undefined): string | undefined {
    if (file === undefined) return undefined;
    if (this.#root === undefined) return path.basename(file);
    const relative = path.relative(this.#root, file);
    return relative.startsWith("..") || path.isAbsolute(relative) ? path.basename(file) : relative;
  }

  /**
   * Stops probing and waiting (the daemon stops): the writes waiting for room fail, so that
   * nothing waits for them forever. What they held is lost, never reported.
   */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiters = this.#writableWaiters;
    this.#writableWaiters = [];
    for (const waiter of waiters) waiter.reject(this.#closedError());
  }

  #closedError(): AgentdError {
    return new AgentdError(
      "STORAGE_FULL",
      "the store closed while full: a write waiting for room was given up",
      {
        hint: "free space in data_dir before starting the daemon again",
      },
    );
  }

  #scheduleProbe(): void {
    if (this.#closed || this.#timer !== undefined || this.#probing) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#runProbe();
    }, this.#probeIntervalMilliseconds);
    this.#timer.unref();
  }

  async #runProbe(): Promise<void> {
    if (!this.#reason || this.#closed) return;
    this.#probing = true;
    try {
      await this.#probe(this.#neededBytes);
      this.#probing = false;
      this.#recovered();
    } catch (error) {
      this.#probing = false;
      this.#logger.debug({ err: error }, "the store is still full");
      this.#scheduleProbe();
    }
  }

  #tell(full: boolean): void {
    for (const listener of [...this.#listeners]) {
      // A listener's own write changed the state again: the newer change told everyone.
      if (this.full !== full) return;
      try {
        listener(full);
      } catch (error) {
        this.#logger.error({ err: error }, "a listener of the storage state failed");
      }
    }
  }
}

/** What to do about a full store, by the error its write failed with. */
function remedyOf(code: string): string {
  if (code === "EDQUOT") return "free space in data_dir or raise its quota; everything resumes by itself";
  if (code === "EROFS")
    return "make data_dir writable again (remount it read-write); everything resumes by itself";
  if (code === "ENOSPC") return "free space in data_dir; everything resumes by itself";
  return "free space in data_dir (or make it writable); everything resumes by itself";
}
