import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { type LoggedEvent, salvageLine } from "./salvage-line.js";

export type { LoggedEvent } from "./salvage-line.js";

/**
 * Reads a JSONL event log from the start: events with id > `after`, oldest first, at most `limit`.
 * A missing file is an empty log; damaged lines (a torn last line) are skipped, and events glued
 * together on one line are read apart (see salvageLine).
 */
export async function readEventLog(
  file: string,
  after = 0,
  limit = Number.POSITIVE_INFINITY,
): Promise<LoggedEvent[]> {
  const found: LoggedEvent[] = [];
  if (limit <= 0) return found;
  const stream = createReadStream(file, { encoding: "utf8" });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      if (line.length === 0) continue;
      for (const logged of salvageLine(line).events) {
        if (logged.event.id <= after || found.length >= limit) continue;
        found.push(logged);
      }
      if (found.length >= limit) break;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  } finally {
    lines.close();
    stream.destroy();
  }
  return found;
}
