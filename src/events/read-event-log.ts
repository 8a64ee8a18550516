import { open, type FileHandle } from "node:fs/promises";
import { seekAfterId } from "./event-log-seek.js";
import { type BytesRead, logLinesFrom } from "./log-lines.js";
import { type LoggedEvent, salvageLine } from "./salvage-line.js";

export type { LoggedEvent } from "./salvage-line.js";

/** Bytes the scan reads at a time. */
const SCAN_CHUNK_BYTES = 65_536;

/**
 * Reads a JSONL event log: events with id > `after`, oldest first, at most `limit`. Ids in a log
 * increase, so a late page starts where a binary search on byte offsets puts it, not at the start
 * of the file: a page near the end of a large log reads a few kilobytes plus the page itself.
 * A missing file is an empty log; damaged lines (a torn last line) are skipped, and events glued
 * together on one line are read apart (see salvageLine). `counter` adds up the bytes read.
 */
export async function readEventLog(
  file: string,
  after = 0,
  limit = Number.POSITIVE_INFINITY,
  counter?: BytesRead,
): Promise<LoggedEvent[]> {
  const found: LoggedEvent[] = [];
  if (limit <= 0) return found;
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return found;
    throw error;
  }
  try {
    const start = after > 0 ? await seekAfterId(handle, (await handle.stat()).size, after, counter) : 0;
    for await (const { text } of logLinesFrom(handle, start, SCAN_CHUNK_BYTES, counter)) {
      if (text.length === 0) continue;
      for (const logged of salvageLine(text).events) {
        if (logged.event.id <= after || found.length >= limit) continue;
        found.push(logged);
      }
      if (found.length >= limit) break;
    }
  } finally {
    await handle.close();
  }
  return found;
}
