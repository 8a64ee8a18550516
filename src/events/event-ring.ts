/** Events of one ring, oldest first: parallel arrays of what the store keeps per event. */
export interface RingSlice {
  ids: number[];
  /** Store-wide append order (see EventStore): orders the merged feed. */
  sequences: number[];
  /** Event time in epoch milliseconds. */
  times: number[];
  /** The event's JSON, exactly as written to disk. */
  lines: string[];
}

/**
 * One agent's last N events, kept as their serialized JSON lines (the same text written to disk),
 * so memory stays close to the size of the JSON and a poll answers without serializing again.
 * Ids and sequences only grow; a gap (an event whose write failed) is fine: lookups search.
 */
export class EventRing {
  readonly capacity: number;
  readonly #ids: Float64Array;
  readonly #sequences: Float64Array;
  readonly #times: Float64Array;
  readonly #lines: Array<string | undefined>;
  /** Physical index of the oldest event. */
  #start = 0;
  #count = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.#ids = new Float64Array(capacity);
    this.#sequences = new Float64Array(capacity);
    this.#times = new Float64Array(capacity);
    this.#lines = new Array<string | undefined>(capacity);
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

  /** Appends an event, dropping the oldest when full. */
  push(id: number, sequence: number, time: number, line: string): void {
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
    this.#lines[index] = line;
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
    const slice: RingSlice = { ids: [], sequences: [], times: [], lines: [] };
    for (let logical = from; logical < this.#count && slice.ids.length < limit; logical++) {
      const index = this.#physical(logical);
      slice.ids.push(this.#ids[index] ?? 0);
      slice.sequences.push(this.#sequences[index] ?? 0);
      slice.times.push(this.#times[index] ?? 0);
      slice.lines.push(this.#lines[index] ?? "");
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
