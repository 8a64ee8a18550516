import { renameSync, statSync } from "node:fs";
import type { Logger } from "../logging/logger.js";

/** What sits where an event log should be. */
export type LogFileState =
  | { kind: "missing" }
  | { kind: "regular"; size: number }
  /** A folder, a FIFO, a device, a socket, a dangling link: nothing agentd can append to or read. */
  | { kind: "damaged"; reason: string };

/** Looks at a log's path (following a symbolic link) without opening it: a FIFO would block a read. */
export function inspectLogFile(file: string): LogFileState {
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) return { kind: "missing" };
    if (stats.isFile()) return { kind: "regular", size: stats.size };
    return { kind: "damaged", reason: stats.isDirectory() ? "a folder" : "not a regular file" };
  } catch (error) {
    return { kind: "damaged", reason: errorReason(error) };
  }
}

/**
 * Moves what sits at a log's path aside to `<name>.damaged-<time>` (kept for whoever wants to look
 * at it), so a fresh log can be made there, and says so. Returns false when even the move failed:
 * the error then names the file to move aside by hand.
 */
export function moveAsideDamaged(file: string, reason: string, logger: Logger, now = new Date()): boolean {
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
    `moved a damaged event log aside (${reason}); a new one starts`,
  );
  return true;
}

/** A short reason from a file system error: its errno code, or its message. */
export function errorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined) return `cannot be read (${code})`;
  return error instanceof Error ? error.message : String(error);
}
