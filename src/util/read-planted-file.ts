import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** Never waits for a FIFO's writer; the same as O_RDONLY for a regular file. */
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * A small text file that a sandboxed process may have made or swapped — a CLI's config in its
 * writable config folder, the `.git/config` of a repository an agent made — read whole on the
 * daemon's thread, or undefined unless it is a regular file of at most `maxBytes` (a missing or
 * unreadable one too). Opened once, without blocking, and checked on the open descriptor: a FIFO
 * planted (or renamed in between a check and a read) would otherwise hold the event loop until
 * a writer came, forever, and a device (`/dev/zero` through a link) or a sparse file of
 * gigabytes would fill the daemon's memory. Links are followed, as before.
 */
export function readPlantedFileSync(file: string, maxBytes: number): string | undefined {
  let descriptor: number;
  try {
    descriptor = openSync(file, FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    // One byte more than the file had: a file that grew past its size since is refused too.
    const buffer = Buffer.alloc(stats.size + 1);
    let length = 0;
    for (;;) {
      const read = readSync(descriptor, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length === buffer.length) return undefined;
    }
    return buffer.toString("utf8", 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(descriptor);
  }
}
