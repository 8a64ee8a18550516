import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { AgentdError } from "../errors/agentd-error.js";

/**
 * O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer (which
 * would hold the start, or one of libuv's four threads, forever). It changes nothing for a regular
 * file. Symbolic links are followed: a state file linked elsewhere by its owner is read as before.
 */
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * A state file of data_dir read whole, refusing anything but a regular file (a FIFO, a socket, a
 * device) with STORE_CORRUPT naming the file and what to do, which a caller treats as it treats any
 * unreadable file (only `ENOENT` means "none"). A folder fails with `EISDIR` as before.
 */
export function readRegularFileSync(file: string): string {
  const descriptor = openSync(file, FLAGS);
  try {
    refuseOtherThanFile(file, fstatSync(descriptor));
    return readFileSync(descriptor, "utf8");
  } finally {
    closeSync(descriptor);
  }
}

/** readRegularFileSync on libuv's threads. */
export async function readRegularFile(file: string): Promise<string> {
  const handle = await open(file, FLAGS);
  try {
    refuseOtherThanFile(file, await handle.stat());
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

function refuseOtherThanFile(file: string, stats: Stats): void {
  if (stats.isFile()) return;
  if (stats.isDirectory()) {
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${file}'`), {
      code: "EISDIR",
      path: file,
    });
  }
  const kind = stats.isFIFO() ? "a FIFO" : stats.isSocket() ? "a socket" : "a device";
  throw new AgentdError("STORE_CORRUPT", `${file} is ${kind}, not a regular file`, {
    file,
    hint: "move it aside (look at it, then delete it) and start again",
    details: { code: "EFTYPE" },
  });
}
