import { closeSync, readFileSync, readdirSync } from "node:fs";

/** O_CLOEXEC among the flags /proc/<pid>/fdinfo writes (octal). */
const CLOSE_ON_EXEC = 0o2000000;

/**
 * Closes the descriptors this process inherited open across exec, beyond stdin, stdout, stderr and
 * Node's IPC channel. Neither libuv nor bubblewrap closes a descriptor that lacks O_CLOEXEC, so
 * every child — sandboxed ones included — would get it too: a pipe, file or socket of whatever
 * started the daemon (a supervisor, a CI runner, a shell's `9>file`), reachable past the sandbox's
 * hidden paths and its socket filter. Node and the daemon open their own with O_CLOEXEC. Call it
 * first thing in the daemon's process; on a system without /proc nothing is read. Returns the
 * descriptors closed.
 */
export function closeInheritedDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const channel = Number(process.env["NODE_CHANNEL_FD"] ?? -1);
  const closed: number[] = [];
  for (const entry of entries) {
    const descriptor = Number(entry);
    if (!Number.isInteger(descriptor) || descriptor <= 2 || descriptor === channel) continue;
    let flags: number;
    try {
      const match = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${descriptor}`, "utf8"));
      if (match?.[1] === undefined) continue;
      flags = Number.parseInt(match[1], 8);
    } catch {
      continue; // Gone already (the listing's own descriptor).
    }
    if ((flags & CLOSE_ON_EXEC) !== 0) continue;
    try {
      closeSync(descriptor);
      closed.push(descriptor);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
