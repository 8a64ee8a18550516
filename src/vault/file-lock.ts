import { mkdir, open, rm, rmdir, stat } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { AgentdError } from "../errors/agentd-error.js";
import { timeoutSignal } from "../util/timeout-signal.js";

/** How long a writer waits for another one before giving up. */
const WAIT_MILLISECONDS = 10_000;
/** A lock older than this was left by a process that died mid-write: a write takes milliseconds. */
const STALE_MILLISECONDS = 30_000;

/**
 * Runs `work` while holding `<file>.lock` (created exclusively), so two processes — two
 * `agentd secrets set`, or one beside the daemon — never read-modify-write `file` at once and lose
 * each other's change. Waiting for the lock has one deadline: 10 s (VAULT_UNAVAILABLE) merged with
 * the caller's `signal` (its reason is thrown).
 */
export async function withFileLock<Result>(
  file: string,
  work: () => Promise<Result>,
  signal?: AbortSignal,
): Promise<Result> {
  const lock = `${file}.lock`;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const timeout = timeoutSignal(WAIT_MILLISECONDS);
  const waiting = signal ? AbortSignal.any([signal, timeout]) : timeout;
  while (!(await tryLock(lock))) {
    // Broken by this waiter: try at once; being broken by another: wait as for a held lock.
    if ((await isStale(lock)) && (await breakStaleLock(lock))) continue;
    if (waiting.aborted) {
      if (waiting.reason !== timeout.reason) throw waiting.reason;
      throw new AgentdError("VAULT_UNAVAILABLE", `the vault file ${file} stayed locked by another process`, {
        file,
        hint: `retry; if no other agentd command is writing secrets, remove ${lock}`,
      });
    }
    // Jitter, so waiting writers do not retry in lockstep; the deadline is checked above.
    await delay(10 + Math.random() * 40, undefined, { signal: waiting }).catch(() => undefined);
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

async function tryLock(lock: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(lock, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.writeFile(`${process.pid}\n`, "utf8");
  } catch (error) {
    // A full disk takes the empty file but not its line: the lock is this writer's, and is let go.
    // Left there, it held off every writer for 30 s (until stale) with "stayed locked".
    await handle.close().catch(() => undefined);
    await rm(lock, { force: true });
    throw error;
  }
  await handle.close();
  return true;
}

async function isStale(lock: string): Promise<boolean> {
  const info = await stat(lock).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > STALE_MILLISECONDS;
}

/**
 * Takes a stale lock away, one waiter at a time: under `<lock>.break` (a folder, made exclusively),
 * the lock is looked at again and removed only if it is still stale. No fresh lock can be taken
 * while the stale one is there (a lock is made exclusively), and only the holder of `.break`
 * removes a stale one, so a waiter never removes a lock another has just taken. (Renaming the lock
 * aside to look at it, as this did before, could move a fresh lock away for a moment, in which a
 * third waiter took the lock too: two writers inside.) A `.break` left by a process that died while
 * breaking is itself removed once stale. True when this waiter did the breaking.
 */
async function breakStaleLock(lock: string): Promise<boolean> {
  const breaking = `${lock}.break`;
  try {
    await mkdir(breaking, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (await isStale(breaking)) await rmdir(breaking).catch(() => undefined);
    return false; // Another waiter is breaking it.
  }
  try {
    if (await isStale(lock)) await rm(lock, { force: true });
    return true;
  } finally {
    await rmdir(breaking).catch(() => undefined);
  }
}
