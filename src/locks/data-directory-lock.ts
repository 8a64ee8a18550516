import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import { currentProcessIdentity, isProcessAlive } from "./process-identity.js";
import { readRegularFileSync } from "../util/read-regular-file.js";

/** Who holds a data folder: written into `<data_dir>/agentd.lock`. */
export const LockHolderSchema = z.object({
  pid: z.number().int().positive(),
  hostname: z.string(),
  boot_id: z.string().optional(),
  process_start: z.string().optional(),
  /** `start` (the daemon) or `run` (an `agentd run` without a daemon). */
  command: z.enum(["start", "run"]),
  /** The daemon's API, once it listens. */
  url: z.string().optional(),
  /** The agent an `agentd run` runs. */
  agent: z.string().optional(),
  since: z.string(),
});
export type LockHolder = z.infer<typeof LockHolderSchema>;

/** How the lock file is put in place: a hard link (swapped by the tests of file systems without them). */
export interface LockFileSystem {
  link: (existing: string, created: string) => void;
}

const nodeFileSystem: LockFileSystem = { link: linkSync };

/** A takeover guard older than this belongs to a process that died in the middle of one (a takeover takes microseconds). */
const STALE_GUARD_MILLISECONDS = 10_000;
/** A lock file that cannot be parsed yet may be mid-write (file systems without hard links): give it this long. */
const UNREADABLE_GRACE_MILLISECONDS = 2_000;
const ATTEMPTS = 200;

/**
 * The exclusive ownership of a data folder: one daemon (or one `agentd run`) at a time, so runs,
 * event ids and schedules have one writer. Taken first, before anything in the folder is read or
 * written. The lock file appears complete in one step (written beside it, then hard-linked into
 * place, which fails if it exists). A lock whose process is gone — by pid, and on Linux by boot and
 * process start time, so a reused pid does not count — is taken over under a short-lived guard
 * directory, so two starters that both found it stale cannot both take it.
 */
export class DataDirectoryLock {
  readonly file: string;
  #text: string;
  #held = true;
  readonly #releaseOnExit = () => this.release();

  private constructor(file: string, text: string) {
    this.file = file;
    this.#text = text;
    process.on("exit", this.#releaseOnExit);
  }

  /** Takes the lock of `dataDirectory`, or throws DATA_DIR_LOCKED naming the live holder. */
  static acquire(
    dataDirectory: string,
    holder: Pick<LockHolder, "command" | "agent">,
    fileSystem: LockFileSystem = nodeFileSystem,
  ): DataDirectoryLock {
    mkdirSync(dataDirectory, { recursive: true });
    const file = lockFileOf(dataDirectory);
    const record: LockHolder = { ...currentProcessIdentity(), ...holder, since: new Date().toISOString() };
    const text = `${JSON.stringify(record)}\n`;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      if (createExclusively(file, text, fileSystem)) return new DataDirectoryLock(file, text);
      const found = readLock(file);
      if (found === "absent") {
        // A link to nothing exists for the exclusive create and is absent for the read: no process
        // will ever release it (it was "taken by other processes" until the attempts ran out).
        if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) {
          throw foreignLockError(file, "a symbolic link to nothing");
        }
        continue;
      }
      if (found === "unreadable") {
        if (ageOf(file) < UNREADABLE_GRACE_MILLISECONDS) sleep(10);
        else removeStale(file, readText(file));
        continue;
      }
      if (isProcessAlive(found.holder)) throw lockedError(dataDirectory, found.holder);
      if (!removeStale(file, found.text)) sleep(5 + Math.random() * 20);
    }
    throw new AgentdError("DATA_DIR_LOCKED", `could not take the lock of ${dataDirectory}`, {
      file,
      hint: "other processes keep taking it; retry",
    });
  }

  /**
   * Takes the lock (or goes on with one already taken), then builds what will hold it with
   * `assemble`; the lock is released if that fails, and otherwise belongs to what was built (which
   * releases it when it ends).
   */
  static async holdWhile<Value>(
    dataDirectory: string | DataDirectoryLock,
    holder: Pick<LockHolder, "command" | "agent">,
    assemble: (lock: DataDirectoryLock) => Promise<Value>,
  ): Promise<Value> {
    const lock =
      dataDirectory instanceof DataDirectoryLock
        ? dataDirectory
        : DataDirectoryLock.acquire(dataDirectory, holder);
    try {
      return await assemble(lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** The live holder of `dataDirectory`'s lock, or undefined when it is free or its holder died. */
  static holderOf(dataDirectory: string): LockHolder | undefined {
    const found = readLock(lockFileOf(dataDirectory));
    if (typeof found === "string") return undefined;
    return isProcessAlive(found.holder) ? found.holder : undefined;
  }

  /** Adds facts once known (the daemon's URL once it listens), replacing the file atomically. */
  update(patch: Pick<LockHolder, "url">): void {
    if (!this.#held) return;
    const record = { ...LockHolderSchema.parse(JSON.parse(this.#text)), ...patch };
    const text = `${JSON.stringify(record)}\n`;
    const temporary = writeTemporary(this.file, text);
    renameSync(temporary, this.file);
    this.#text = text;
  }

  /** Gives the folder up (only if the lock file is still this one). Idempotent. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    process.off("exit", this.#releaseOnExit);
    if (readText(this.file) === this.#text) unlinkSync(this.file);
  }
}

export function lockFileOf(dataDirectory: string): string {
  return path.join(dataDirectory, "agentd.lock");
}

function lockedError(dataDirectory: string, holder: LockHolder): AgentdError {
  const what =
    holder.command === "start" ? "an agentd daemon" : `agentd run${holder.agent ? ` ${holder.agent}` : ""}`;
  const where = [`pid ${holder.pid}`, holder.hostname, holder.url].filter(Boolean).join(", ");
  return new AgentdError(
    "DATA_DIR_LOCKED",
    `${dataDirectory} is in use by ${what} (${where}) since ${holder.since}`,
    {
      file: lockFileOf(dataDirectory),
      hint:
        holder.command === "start"
          ? "stop that daemon first (or give this one another data_dir); one daemon owns a data folder"
          : "wait for that run to end, or start the daemon: runs sent to it queue",
      details: { holder },
    },
  );
}

/** Something no agentd made in the lock file's place: a folder, a symbolic link to nothing. */
function foreignLockError(file: string, what: string): AgentdError {
  return new AgentdError(
    "STORE_CORRUPT",
    `${file} is ${what}, not a lock file: the data folder's lock cannot be taken`,
    { file, hint: "move it aside (agentd makes the lock file itself) and start again" },
  );
}

/** Creates the lock file with its whole content in one step; false when it exists. */
function createExclusively(file: string, text: string, fileSystem: LockFileSystem): boolean {
  const temporary = writeTemporary(file, text);
  try {
    fileSystem.link(temporary, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw error;
    return createWithoutLinks(file, text);
  } finally {
    unlinkSync(temporary);
  }
}

/**
 * For file systems without hard links: an exclusive create, then the content. Should the content
 * not fit (a full disk), the file just made is removed: left empty, it read as a lock being written
 * and held the next start for seconds, or past its attempts.
 */
function createWithoutLinks(file: string, text: string): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } catch (error) {
    closeSync(descriptor);
    unlinkSync(file);
    throw error;
  }
  closeSync(descriptor);
  return true;
}

function writeTemporary(file: string, text: string): string {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const descriptor = openSync(temporary, "wx", 0o600);
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } catch (error) {
    // A full disk: no temp file is left behind at each failed start.
    closeSync(descriptor);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(descriptor);
  return temporary;
}

type FoundLock = "absent" | "unreadable" | { holder: LockHolder; text: string };

function readLock(file: string): FoundLock {
  let text: string | undefined;
  try {
    text = readText(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EISDIR") throw foreignLockError(file, "a folder");
    throw error;
  }
  if (text === undefined) return "absent";
  try {
    const parsed = LockHolderSchema.safeParse(JSON.parse(text));
    return parsed.success ? { holder: parsed.data, text } : "unreadable";
  } catch {
    return "unreadable";
  }
}

function readText(file: string): string | undefined {
  try {
    return readRegularFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function ageOf(file: string): number {
  const stats = statSync(file, { throwIfNoEntry: false });
  return stats === undefined ? 0 : Date.now() - stats.mtimeMs;
}

/**
 * Removes a stale lock file, but only while it still holds `staleText`, and only inside the
 * takeover guard: two starters that both judged it stale cannot both remove it, and neither can
 * remove a fresh lock the other has just created in its place. False when another takeover runs.
 */
function removeStale(file: string, staleText: string | undefined): boolean {
  const guard = `${file}.takeover`;
  try {
    mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (ageOf(guard) > STALE_GUARD_MILLISECONDS) breakGuard(guard);
    return false;
  }
  try {
    if (readText(file) === staleText && staleText !== undefined) unlinkSync(file);
    return true;
  } finally {
    rmdirSync(guard);
  }
}

/** A guard left by a process that died mid-takeover: renamed away first, so only one breaker removes it. */
function breakGuard(guard: string): void {
  const claimed = `${guard}.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    renameSync(guard, claimed);
    rmdirSync(claimed);
  } catch {
    // Another starter broke it first.
  }
}

/** Waits without yielding: the lock is taken before the daemon does anything else. */
function sleep(milliseconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);
}
