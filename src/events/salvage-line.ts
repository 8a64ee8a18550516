import { parseStoredEvent, type StoredEvent } from "./stored-event-schema.js";

/** One event read back from a log, with the exact text it is served as. */
export interface LoggedEvent {
  event: StoredEvent;
  line: string;
}

/** What one line of a log holds: its events, and whether it was damaged. */
export interface SalvagedLine {
  /** The whole events found: one for a sound line, more for lines glued together (`{…}{…}`). */
  events: LoggedEvent[];
  /** The line was not one event (garbled, glued, torn, NUL bytes, valid JSON but no event). */
  damaged: boolean;
  /**
   * The highest id the line shows, including the id at the start of a torn event (`{"id":42,"ag…`),
   * which may have been reported before its end was lost: the next id must go above it.
   */
  highestId: number;
}

/** Every event line starts so (JSON.stringify of an event: `id` first, then `agent`). */
const EVENT_START = '{"id":';
const TORN_START = /^\{"id":(\d{1,15})(?:,"agent":"([^"\\]*)")?/;
/** Whitespace around a line (a CRLF ending) and NUL bytes (a power loss's unwritten block). */
const EDGES = /^[\s\0]+|[\s\0]+$/g;

/**
 * Reads one line of an event log, keeping whatever can be kept: a sound line is one event; a
 * damaged one is searched for events glued to it or to each other (an append made onto a torn
 * line by an older build), and for the id of a torn one. `agent`: the log's agent; events and ids
 * of any other agent are not counted (they were never this log's).
 */
export function salvageLine(raw: string, agent?: string): SalvagedLine {
  const line = raw.replace(EDGES, "");
  if (line.length === 0)
    return { events: [], damaged: line.length !== raw.length && raw.includes("\0"), highestId: 0 };
  const event = parseStoredEvent(line);
  if (event && (agent === undefined || event.agent === agent)) {
    return { events: [{ event, line }], damaged: false, highestId: event.id };
  }
  const salvaged: SalvagedLine = { events: [], damaged: true, highestId: 0 };
  const starts: number[] = [];
  for (let index = line.indexOf(EVENT_START); index >= 0; index = line.indexOf(EVENT_START, index + 1)) {
    starts.push(index);
  }
  starts.forEach((start, position) => {
    const piece = line.slice(start, starts[position + 1] ?? line.length).replace(EDGES, "");
    const found = parseStoredEvent(piece);
    if (found) {
      if (agent !== undefined && found.agent !== agent) return;
      salvaged.events.push({ event: found, line: piece });
      salvaged.highestId = Math.max(salvaged.highestId, found.id);
      return;
    }
    const torn = TORN_START.exec(piece);
    if (!torn || (agent !== undefined && torn[2] !== undefined && torn[2] !== agent)) return;
    salvaged.highestId = Math.max(salvaged.highestId, Number(torn[1]));
  });
  return salvaged;
}
