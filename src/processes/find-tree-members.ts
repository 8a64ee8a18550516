import { closeSync, openSync, readSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import pidtree from "pidtree";

/** The variable every tracked child is started with; its descendants inherit it (not secret, not `AGENTD_*`). */
export const PROCESS_MARKER_VARIABLE = "PROCESS_TREE_MARKER";

/** Up to this many processes are looked at without the thread pool (see findTreeMembers). */
const READ_AT_ONCE = 64;

/**
 * The processes of a tree rooted at `rootPid`: descendants of the known ones (by parent pid) and
 * processes carrying the tree's marker in their environment (which survives reparenting, so a
 * process that left the group and lost its parent is still found).
 *
 * On Linux this reads `/proc` without scanning the machine: pids are handed out in increasing
 * order, so only processes with a pid at or above the root's can belong to the tree, unless the pid
 * counter wrapped since (then every process is looked at). Elsewhere pidtree finds the descendants.
 * The few files of a usual scan are read at once (a /proc file costs microseconds, and every call's
 * clean-up waits for the scan: through the thread pool it took a millisecond); a scan of many
 * processes goes through the thread pool, so as not to hold the event loop.
 */
export async function findTreeMembers(
  rootPid: number,
  marker: string,
  known: ReadonlySet<number>,
): Promise<number[]> {
  if (process.platform !== "linux") return pidtree(rootPid).catch(() => [] as number[]);
  const entries = readProcFolder();
  const wrapped = lastAllocatedPid() < rootPid;
  const candidates = entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid && (wrapped || pid >= rootPid))
    .sort((left, right) => left - right);
  const parents = new Map<number, number>();
  const members = new Set<number>(known);
  const look = (pid: number, stat: string, environment: string) => {
    if (environment.includes(`${PROCESS_MARKER_VARIABLE}=${marker}\0`)) members.add(pid);
    const parent = parentOf(stat);
    if (parent !== undefined) parents.set(pid, parent);
  };
  if (candidates.length <= READ_AT_ONCE) {
    for (const pid of candidates) {
      look(pid, readProcFile(`/proc/${pid}/stat`) ?? "", readProcFile(`/proc/${pid}/environ`) ?? "");
    }
  } else {
    await Promise.all(
      candidates.map(async (pid) => {
        const [stat, environment] = await Promise.all([
          readFile(`/proc/${pid}/stat`, "latin1").catch(() => ""),
          readFile(`/proc/${pid}/environ`, "latin1").catch(() => ""),
        ]);
        look(pid, stat, environment);
      }),
    );
  }
  // A child that cleared its environment is found through its parent; a parent's pid is lower.
  for (const pid of candidates) {
    const parent = parents.get(pid);
    if (parent !== undefined && members.has(parent)) members.add(pid);
  }
  return [...members].filter((pid) => !known.has(pid));
}

/** The parent pid in a `/proc/<pid>/stat` line: the second field after the parenthesised name. */
function parentOf(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const parent = Number(fields[1]);
  return Number.isInteger(parent) && parent > 0 ? parent : undefined;
}

/** The last pid the kernel handed out in this pid namespace; 0 (every process looked at) when unknown. */
function lastAllocatedPid(): number {
  const text = readProcFile("/proc/sys/kernel/ns_last_pid") ?? "";
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

/** The names in /proc; none when it cannot be read. */
function readProcFolder(): string[] {
  try {
    return readdirSync("/proc");
  } catch {
    return [];
  }
}

/**
 * Where readProcFile reads; grown to the largest file met. /proc files report no size, so
 * readFileSync would allocate a 64 KiB buffer for each (most of a scan's cost).
 */
let procBuffer = Buffer.allocUnsafe(16 * 1024);

/** A /proc file's text, read at once; undefined when it cannot be read (the process ended, or is another user's). */
export function readProcFile(file: string): string | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === procBuffer.length) {
        const larger = Buffer.allocUnsafe(procBuffer.length * 2);
        procBuffer.copy(larger);
        procBuffer = larger;
      }
      const read = readSync(descriptor, procBuffer, length, procBuffer.length - length, null);
      if (read === 0) return procBuffer.toString("latin1", 0, length);
      length += read;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(descriptor);
  }
}
