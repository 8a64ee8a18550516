import type { RunRecord } from "./run-record.js";

/**
 * Every run record held in memory, and each agent's newest run, for the stores that keep them:
 * reads never touch the disk or the database. Records may arrive in any order (another node's
 * runs come through the change feed), so the newest is decided by `created_at`; of two created in
 * the same millisecond, the one added later wins, and an update never makes an older run newest.
 */
export class RunRecordIndex {
  readonly #records = new Map<string, RunRecord>();
  /** Agent id → id of its newest run. */
  readonly #newestByAgent = new Map<string, string>();

  /** Adds a new record or replaces the current one of the same run. */
  put(record: RunRecord): void {
    const isNew = !this.#records.has(record.id);
    this.#records.set(record.id, record);
    const newest = this.lastOf(record.agent);
    const isNewer =
      !newest || newest.created_at < record.created_at || (isNew && newest.created_at === record.created_at);
    if (isNewer) this.#newestByAgent.set(record.agent, record.id);
  }

  /** Every run, in the order they were first added. */
  all(): RunRecord[] {
    return [...this.#records.values()];
  }

  get(id: string): RunRecord | undefined {
    return this.#records.get(id);
  }

  /** The newest run of an agent. */
  lastOf(agentId: string): RunRecord | undefined {
    const id = this.#newestByAgent.get(agentId);
    return id === undefined ? undefined : this.#records.get(id);
  }
}
