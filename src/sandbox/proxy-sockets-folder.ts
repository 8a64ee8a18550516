import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const PREFIX = "agentd-proxies-";

let folder: string | undefined;

/**
 * The folder (0700, made once per process, removed when it exits) that holds each node bridge's
 * network proxy socket, in a folder of its own. Only the node bridge (where perl is missing, see
 * listener-handoff.ts) needs it, so it is made only for a sandbox host that will use that bridge
 * (see SandboxHost), before any of its sandboxes runs. Hidden in every sandbox: with the seccomp
 * filter off (config lists `unix_sockets`), no agent may reach another agent's proxy and its host
 * list.
 *
 * A process that never exits cleanly (kill -9, a test worker) cannot remove its folder, so its name
 * says whose it is (`agentd-proxies-<pid namespace>-<pid>-…`): making one removes those of this
 * user whose process no longer runs in this PID namespace.
 */
export function proxySocketsFolder(): string {
  // Removed while the process runs (a cleaner of old temporary files): made again where it was,
  // which every policy hides; where that fails, anew.
  if (folder !== undefined && !existsSync(folder)) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch {
      folder = undefined;
    }
  }
  if (folder === undefined) {
    const owner = `${PREFIX}${pidNamespace()}-`;
    removeAbandonedFolders(os.tmpdir(), owner);
    const made = mkdtempSync(path.join(os.tmpdir(), `${owner}${process.pid}-`));
    folder = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return folder;
}

/** The folder, if this process made it; nothing is made. */
export function madeProxySocketsFolder(): string | undefined {
  return folder;
}

/** This process's PID namespace, as a number (its inode); 0 where it cannot be read. */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {
    return "0";
  }
}

/** Removes the folders in `temporary` named `<owner><pid>-…` of this user whose process is gone. */
function removeAbandonedFolders(temporary: string, owner: string): void {
  let entries: string[];
  try {
    entries = readdirSync(temporary);
  } catch {
    return;
  }
  const user = process.getuid?.();
  for (const entry of entries) {
    if (!entry.startsWith(owner)) continue;
    const pid = Number(entry.slice(owner.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || isRunning(pid)) continue;
    const abandoned = path.join(temporary, entry);
    try {
      // Only a real folder of this user's: a link named like one (another user's, in a shared /tmp)
      // is never followed to what it points at.
      const stats = lstatSync(abandoned);
      if (!stats.isDirectory() || (user !== undefined && stats.uid !== user)) continue;
      rmSync(abandoned, { recursive: true, force: true });
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
