import { constants, lstatSync, renameSync } from "node:fs";
import type { Logger } from "../logging/logger.js";

/** What sits where an event log should be. */
export type LogFileState =
  | { kind: "missing" }
  | { kind: "regular"; size: number }
  /** A folder, a FIFO, a device, a socket, a symbolic link: nothing agentd appends to or reads. */
  | { kind: "damaged"; reason: string };

/**
 * Flags of every append to an event log: created when missing (0600), never through a symbolic
 * link (ELOOP), so no event is ever written outside data_dir, whatever link was planted there.
 */
export const LOG_APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * Looks at a log's path without opening it (a FIFO would block a read) and without following a
 * symbolic link: a link where a log should be (even one to a regular file, or dangling) is damaged,
 * moved aside rather than read or written through.
 */
export function inspectLogFile(file: string): LogFileState {
  try {
    const stats = lstatSync(file, { throwIfNoEntry: false });
    if (!stats) return { kind: "missing" };
    if (stats.isFile()) return { kind: "regular", size: stats.size };
    const reason = stats.isDirectory()
      ? "a folder"
      : stats.isSymbolicLink()
        ? "a symbolic link"
        : "not a regular file";
    return { kind: "damaged", reason };
  } catch (error) {
    return { kind: "damaged", reason: errorReason(error) };
  }
}

/**
 * Moves what sits at a log's path aside to `<name>.damaged-<time>` (kept for whoever wants to look
 * at it), so a fresh log can be made there, and says so: what was found, where it went, what
 * happens now (`consequence`) and what to do. Returns false when even the move failed: the error
 * then names the file to move aside by hand.
 */
export function moveAsideDamaged(
  file: string,
  reason: string,
  logger: Logger,
  consequence = "a new log starts in its place",
  now = new Date(),
): boolean {
  const aside = `${file}.damaged-${now.toISOString().replaceAll(":", "-")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    logger.error(
      { file, reason, err: error },
      `an event log cannot be used (${reason}) nor moved aside: move ${file} aside by hand and restart; until then this log is not written`,
    );
    return false;
  }
  logger.warn(
    { file, moved_to: aside, reason },
    `moved ${file} aside (${reason}): ${consequence}; look at ${aside}, then delete it`,
  );
  return true;
}

/** A short reason from a file system error: its errno code, or its message. */
export function errorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined) return `cannot be read (${code})`;
  return error instanceof Error ? error.message : String(error);
}
