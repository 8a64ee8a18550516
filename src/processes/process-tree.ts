import { readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { timeoutSignal } from "../util/timeout-signal.js";
import { PROCESS_MARKER_VARIABLE, findTreeMembers, readProcFile } from "./find-tree-members.js";

/** How often a terminating tree is looked at. */
const POLL_MILLISECONDS = 50;
/** How long SIGKILL is sent again to what a fresh scan still finds running. */
const KILL_MILLISECONDS = 5_000;

/**
 * The processes of one CLI run: the child (leader of its own process group), its group, and every
 * descendant seen so far — also those that left the group (setsid) or were orphaned. Descendants
 * are found by parent pid while their parent lives and, on Linux, by the marker variable in
 * `/proc/<pid>/environ`, which survives reparenting (see find-tree-members.ts).
 */
export class ProcessTree {
  readonly #rootPid: number;
  readonly #marker: string;
  readonly #known = new Set<number>();

  constructor(rootPid: number, marker: string) {
    this.#rootPid = rootPid;
    this.#marker = marker;
    this.#known.add(rootPid);
  }

  /** Adds the current descendants to the known set. Never throws. */
  async collect(): Promise<void> {
    for (const pid of await findTreeMembers(this.#rootPid, this.#marker, this.#known)) this.#known.add(pid);
  }

  /** Sends `signal` to the process group and to every known process still running. */
  async signal(signal: NodeJS.Signals): Promise<void> {
    await this.collect();
    this.#send([signal]);
  }

  /**
   * Ends the whole tree: SIGTERM (with SIGCONT, so a paused tree sees it), then SIGKILL to what is
   * still running once the grace is over — after `graceMilliseconds`, or at once when `hurry`
   * aborts (a caller that must be done now). Resolves when nothing of the tree runs any more.
   */
  async terminate(graceMilliseconds: number, hurry?: AbortSignal): Promise<void> {
    await this.collect();
    if (this.#gone()) {
      // A process forked while the scan listed /proc, by a parent that has exited since (`(setsid
      // cmd &)` as its shell is killed), was in neither: it is in /proc now, and in a second scan.
      await this.collect();
      if (this.#gone()) return;
    }
    this.#send(["SIGTERM", "SIGCONT"]);
    const grace = AbortSignal.any([timeoutSignal(graceMilliseconds), ...(hurry ? [hurry] : [])]);
    while (this.#running().length > 0 && !grace.aborted) await pause(POLL_MILLISECONDS, grace);
    if (this.#gone()) return;
    // A process forked while the signals went out (and one that left the group) is found by a fresh
    // scan; kill until a scan finds nothing of the tree still running.
    const killing = timeoutSignal(KILL_MILLISECONDS);
    do {
      this.#send(["SIGKILL"]);
      await pause(POLL_MILLISECONDS);
      await this.collect();
    } while (this.#running().length > 0 && !killing.aborted);
  }

  /** Whether nothing known of the tree runs and its process group is empty. */
  #gone(): boolean {
    return this.#running().length === 0 && !groupExists(this.#rootPid);
  }

  #send(signals: NodeJS.Signals[]): void {
    const running = this.#running();
    for (const signal of signals) {
      sendSignal(-this.#rootPid, signal);
      for (const pid of running) sendSignal(pid, signal);
    }
  }

  /** Known processes still running; on Linux only those that still carry this run's marker. */
  #running(): number[] {
    const running: number[] = [];
    for (const pid of this.#known) {
      if (isProcessRunning(pid) && carriesMarker(pid, this.#marker)) running.push(pid);
    }
    return running;
  }
}

/** True when `pid` exists and is not a zombie. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    // The state is the field after the parenthesised command name.
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return false;
  }
}

function groupExists(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch {
    return false;
  }
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already, or not ours: nothing to end.
  }
}

function carriesMarker(pid: number, marker: string): boolean {
  if (process.platform !== "linux") return true;
  // Read at once, as isZombie reads the state: one small /proc file, where the thread pool would make
  // every call's clean-up wait.
  const environment = readProcFile(`/proc/${pid}/environ`);
  // Unreadable (exited meanwhile, or another user's): trust what the scan found.
  if (environment === undefined) return true;
  // Empty: a process on its way out, its memory already released but not yet a zombie (a killed
  // one of ours; a live process that took a freed pid has an environment). Still running.
  return environment === "" || environment.includes(`${PROCESS_MARKER_VARIABLE}=${marker}\0`);
}

/** Waits `milliseconds`, or less when `signal` aborts first. */
function pause(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return delay(milliseconds, undefined, signal ? { signal } : {}).catch(() => undefined);
}
