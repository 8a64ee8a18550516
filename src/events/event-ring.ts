/**
 * What the ring keeps of a line longer than its threshold: its length only. The whole line is in
 * the agent's log, found by the event's id (EventLog.history), and read from there when a page
 * includes it: a model's answer of 4 Mi characters is not held 200 times per agent.
 */
export class LineOnDisk {
  constructor(readonly chars: number) {}
}

/** A line as a ring keeps it: the JSON text, or, for a long one, a stand-in (see LineOnDisk). */
export type RingLine = string | LineOnDisk;

/** Lines longer than this (in UTF-16 characters) are kept on disk only (see LineOnDisk). */
export const DEFAULT_LARGE_LINE_CHARS = 64 * 1024;

/** The line a ring keeps for `line`: itself, or a stand-in when longer than `largeLineChars`. */
export function ringLine(line: RingLine, largeLineChars: number): RingLine {
  return typeof line === "string" && line.length > largeLineChars ? new LineOnDisk(line.length) : line;
}

/** Events of one ring, oldest first: parallel arrays of what the store keeps per event. */
export interface RingSlice {
  ids: number[];
  /** Store-wide append order (see EventStore): orders the merged feed. */
  sequences: number[];
  /** Event time in epoch milliseconds. */
  times: number[];
  /** The event's JSON, exactly as written to disk, or its stand-in when it is kept there only. */
  lines: RingLine[];
  /** How many of `lines` are stand-ins (LineOnDisk). */
  onDisk: number;
}

/**
 * One agent's last N events, kept as their serialized JSON lines (the same text written to disk),
 * so memory stays close to the size of the JSON and a poll answers without serializing again.
 * A line longer than `largeLineChars` is kept as a stand-in (LineOnDisk): a ring holds at most
 * capacity × largeLineChars characters of text, whatever the events' sizes.
 * Ids and sequences only grow; a gap (an event whose write failed) is fine: lookups search.
 */
export class EventRing {
  readonly capacity: number;
  readonly #ids: Float64Array;
  readonly #sequences: Float64Array;
  readonly #times: Float64Array;
  readonly #lines: Array<RingLine | undefined>;
  readonly #largeLineChars: number;
  /** Physical index of the oldest event. */
  #start = 0;
  #count = 0;

  constructor(capacity: number, largeLineChars = DEFAULT_LARGE_LINE_CHARS) {
    this.capacity = capacity;
    this.#largeLineChars = largeLineChars;
    this.#ids = new Float64Array(capacity);
    this.#sequences = new Float64Array(capacity);
    this.#times = new Float64Array(capacity);
    this.#lines = new Array<RingLine | undefined>(capacity);
  }

  get size(): number {
    return this.#count;
  }

  /** Oldest id held, or undefined when empty. */
  get oldestId(): number | undefined {
    return this.#count === 0 ? undefined : this.#ids[this.#start];
  }

  /** Newest id held, or 0 when empty. */
  get newestId(): number {
    return this.#count === 0 ? 0 : (this.#ids[this.#physical(this.#count - 1)] ?? 0);
  }

  /** Newest sequence held, or 0 when empty. */
  get newestSequence(): number {
    return this.#count === 0 ? 0 : (this.#sequences[this.#physical(this.#count - 1)] ?? 0);
  }

  /** Characters of JSON text held (stand-ins count nothing): at most capacity × largeLineChars. */
  retainedChars(): number {
    let chars = 0;
    for (const line of this.#lines) if (typeof line === "string") chars += line.length;
    return chars;
  }

  /** Appends an event, dropping the oldest when full; a long line is kept as a stand-in. */
  push(id: number, sequence: number, time: number, line: RingLine): void {
    let index: number;
    if (this.#count < this.capacity) {
      index = this.#physical(this.#count);
      this.#count++;
    } else {
      index = this.#start;
      this.#start = (this.#start + 1) % this.capacity;
    }
    this.#ids[index] = id;
    this.#sequences[index] = sequence;
    this.#times[index] = time;
    this.#lines[index] = ringLine(line, this.#largeLineChars);
  }

  /** Up to `limit` events with id > `after`, oldest first. */
  afterId(after: number, limit: number): RingSlice {
    return this.#slice(this.#firstAbove(this.#ids, after), limit);
  }

  /** Up to `limit` events with sequence > `after`, oldest first. */
  afterSequence(after: number, limit: number): RingSlice {
    return this.#slice(this.#firstAbove(this.#sequences, after), limit);
  }

  /** How many held events have a sequence > `after`. */
  countAfterSequence(after: number): number {
    return this.#count - this.#firstAbove(this.#sequences, after);
  }

  /** Every held event, oldest first. */
  all(): RingSlice {
    return this.#slice(0, this.#count);
  }

  #slice(from: number, limit: number): RingSlice {
    const slice: RingSlice = { ids: [], sequences: [], times: [], lines: [], onDisk: 0 };
    for (let logical = from; logical < this.#count && slice.ids.length < limit; logical++) {
      const index = this.#physical(logical);
      slice.ids.push(this.#ids[index] ?? 0);
      slice.sequences.push(this.#sequences[index] ?? 0);
      slice.times.push(this.#times[index] ?? 0);
      const line = this.#lines[index] ?? "";
      if (typeof line !== "string") slice.onDisk++;
      slice.lines.push(line);
    }
    return slice;
  }

  /** Logical index of the first event whose value in `values` is > `after` (values increase). */
  #firstAbove(values: Float64Array, after: number): number {
    let low = 0;
    let high = this.#count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((values[this.#physical(middle)] ?? 0) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  #physical(logical: number): number {
    return (this.#start + logical) % this.capacity;
  }
}
