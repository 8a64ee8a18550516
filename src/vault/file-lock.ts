import { randomUUID } from "node:crypto";
import { link, mkdir, open, rename, rm, stat } from "node:fs/promises";
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
    if (await isStale(lock)) {
      await breakStaleLock(lock);
      continue;
    }
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
  try {
    const handle = await open(lock, "wx", 0o600);
    await handle.writeFile(`${process.pid}\n`, "utf8");
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

async function isStale(lock: string): Promise<boolean> {
  const info = await stat(lock).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > STALE_MILLISECONDS;
}

/**
 * Takes a stale lock away by renaming it to a name only this process uses, then deleting that:
 * two waiters that both saw the stale lock cannot both remove it, and neither can remove a fresh
 * lock a third one has just taken (the rename then fails, or moves a lock that is checked again).
 */
async function breakStaleLock(lock: string): Promise<void> {
  // A name no other waiter uses, in this process too: two waiters of one process in the same
  // millisecond once shared it, and one removed the fresh lock the other had moved there.
  const claimed = `${lock}.${process.pid}.${randomUUID()}.stale`;
  try {
    await rename(lock, claimed);
  } catch {
    return; // Someone else took it first.
  }
  if (await isStale(claimed)) {
    await rm(claimed, { force: true });
    return;
  }
  // A fresh lock was renamed by mistake: put it back unless its owner already took a new one.
  await link(claimed, lock).catch(() => undefined);
  await rm(claimed, { force: true });
}
