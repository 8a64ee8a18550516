import type { RunRecord } from "../run-vocabulary/run-record.js";

/**
 * The run records read or written last, at most `capacity` of them: the runs a client looks at
 * (a listing's first page, a run's page) are served without reading their files again.
 */
export class RecentRecords {
  readonly #records = new Map<string, RunRecord>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(id: string): RunRecord | undefined {
    const record = this.#records.get(id);
    if (record) {
      // Most recently used last.
      this.#records.delete(id);
      this.#records.set(id, record);
    }
    return record;
  }

  put(record: RunRecord): void {
    this.#records.delete(record.id);
    this.#records.set(record.id, record);
    if (this.#records.size > this.#capacity) {
      const oldest = this.#records.keys().next();
      if (!oldest.done) this.#records.delete(oldest.value);
    }
  }

  delete(id: string): void {
    this.#records.delete(id);
  }
}
