import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/** What tells a process apart from a later one that got the same pid. */
export interface ProcessIdentity {
  pid: number;
  hostname: string;
  /** Linux: the boot this process runs in (`/proc/sys/kernel/random/boot_id`). */
  boot_id?: string | undefined;
  /** Linux: the process start time in clock ticks since boot (`/proc/<pid>/stat`, field 22). */
  process_start?: string | undefined;
}

/** This process. */
export function currentProcessIdentity(): ProcessIdentity {
  return {
    pid: process.pid,
    hostname: hostname(),
    boot_id: bootId(),
    process_start: processStart(process.pid),
  };
}

/**
 * Whether the process is still running. A pid alone is not enough: after the holder died another
 * process may have been given its pid, so on Linux the boot and the start time must match too. A
 * process on another host cannot be checked and counts as alive.
 */
export function isProcessAlive(identity: ProcessIdentity): boolean {
  if (identity.hostname !== hostname()) return true;
  const currentBoot = bootId();
  if (identity.boot_id !== undefined && currentBoot !== undefined && identity.boot_id !== currentBoot)
    return false;
  try {
    process.kill(identity.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (identity.process_start === undefined) return true;
  const start = processStart(identity.pid);
  return start === undefined || start === identity.process_start;
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}
