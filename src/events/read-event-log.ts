import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseStoredEvent, type StoredEvent } from "./stored-event-schema.js";

/** One event read back from a log, with the exact line it was stored as. */
export interface LoggedEvent {
  event: StoredEvent;
  line: string;
}

/**
 * Reads a JSONL event log from the start: events with id > `after`, oldest first, at most `limit`.
 * A missing file is an empty log; damaged lines (a torn last line) are skipped.
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
      const event = parseStoredEvent(line);
      if (!event || event.id <= after) continue;
      found.push({ event, line });
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
