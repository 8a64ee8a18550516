import type { FileHandle } from "node:fs/promises";
import { type BytesRead, logLinesFrom } from "./log-lines.js";
import { parseStoredEvent } from "./stored-event-schema.js";

/** Bytes a probe reads at a time: most event lines fit, so a probe is usually one read. */
const PROBE_CHUNK_BYTES = 4_096;
/** Below this span the search stops and the reader scans. */
const SCAN_SPAN_BYTES = 16_384;

/**
 * The byte offset of a line start at or before the first event with id > `after` in a log whose
 * ids increase, found by binary search on byte offsets: a probe seeks, skips to the next line and
 * reads the first event there. Damaged lines (torn, glued, garbled) carry no id and are skipped,
 * so they never mislead the search. Reads O(log(size)) small chunks instead of the whole file.
 */
export async function seekAfterId(
  handle: FileHandle,
  size: number,
  after: number,
  counter?: BytesRead,
): Promise<number> {
  let low = 0;
  let high = size;
  while (high - low > SCAN_SPAN_BYTES) {
    const middle = Math.floor((low + high) / 2);
    const probe = await firstEventFrom(handle, middle, counter);
    // Every line before the end of a probe whose id is <= after is <= after too: skip them all.
    if (probe !== undefined && probe.id <= after) low = probe.end;
    else high = middle;
  }
  return low;
}

/** The first whole, valid event line starting at or after `offset` (> 0): its id and its end. */
async function firstEventFrom(
  handle: FileHandle,
  offset: number,
  counter?: BytesRead,
): Promise<{ id: number; end: number } | undefined> {
  // Reading from the byte before `offset`: the first line yielded is the rest of the line that
  // `offset` falls in (empty when a line starts exactly at `offset`), which is not whole.
  let first = true;
  for await (const line of logLinesFrom(handle, offset - 1, PROBE_CHUNK_BYTES, counter)) {
    if (first) {
      first = false;
      continue;
    }
    const event = line.text.length === 0 ? undefined : parseStoredEvent(line.text);
    if (event) return { id: event.id, end: line.end };
  }
  return undefined;
}
