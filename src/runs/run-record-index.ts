import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";

/** An agent's runs not finished yet (queued, running, paused or waiting), and how many are queued. */
export interface UnfinishedRuns {
  unfinished: number;
  queued: number;
}

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
  /** Agent id → its unfinished runs and their status: counts without a scan. */
  readonly #unfinishedByAgent = new Map<string, Map<string, RunRecord["status"]>>();
  /** Agent id and idempotency key → id of the newest run posted with that key. */
  readonly #byIdempotencyKey = new Map<string, string>();
  #queued = 0;

  /** Adds a new record or replaces the current one of the same run. */
  put(record: RunRecord): void {
    const previous = this.#records.get(record.id);
    const isNew = previous === undefined;
    this.#records.set(record.id, record);
    this.#count(previous, record);
    const newest = this.lastOf(record.agent);
    const isNewer =
      !newest || newest.created_at < record.created_at || (isNew && newest.created_at === record.created_at);
    if (isNewer) this.#newestByAgent.set(record.agent, record.id);
    if (record.idempotency_key !== undefined) this.#keep(record, record.idempotency_key);
  }

  /** The newest run of `agentId` posted with this idempotency key (any age: the caller weighs it). */
  byIdempotencyKey(agentId: string, key: string): RunRecord | undefined {
    const id = this.#byIdempotencyKey.get(idempotencyIndexKey(agentId, key));
    return id === undefined ? undefined : this.#records.get(id);
  }

  #keep(record: RunRecord, key: string): void {
    const indexKey = idempotencyIndexKey(record.agent, key);
    const held = this.#records.get(this.#byIdempotencyKey.get(indexKey) ?? "");
    if (held === undefined || held.id === record.id || held.created_at <= record.created_at)
      this.#byIdempotencyKey.set(indexKey, record.id);
  }

  /** An agent's unfinished runs, of every node when the store is shared. */
  unfinishedOf(agentId: string): UnfinishedRuns {
    const statuses = this.#unfinishedByAgent.get(agentId);
    let queued = 0;
    for (const status of statuses?.values() ?? []) if (status === "queued") queued += 1;
    return { unfinished: statuses?.size ?? 0, queued };
  }

  /** Runs queued and not started yet, of every agent. */
  get queued(): number {
    return this.#queued;
  }

  #count(previous: RunRecord | undefined, record: RunRecord): void {
    if (previous?.status === "queued") this.#queued -= 1;
    if (record.status === "queued") this.#queued += 1;
    let statuses = this.#unfinishedByAgent.get(record.agent);
    if (isTerminal(record.status)) {
      statuses?.delete(record.id);
      if (statuses?.size === 0) this.#unfinishedByAgent.delete(record.agent);
      return;
    }
    if (!statuses) this.#unfinishedByAgent.set(record.agent, (statuses = new Map()));
    statuses.set(record.id, record.status);
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

  /**
   * Lets go of a run: pruned, or no longer worth holding in memory (a store that reads older runs
   * back on demand). An agent whose newest run it was has no newest run held until its next one.
   */
  forget(id: string): void {
    const record = this.#records.get(id);
    if (!record) return;
    this.#records.delete(id);
    if (record.status === "queued") this.#queued -= 1;
    const statuses = this.#unfinishedByAgent.get(record.agent);
    statuses?.delete(id);
    if (statuses?.size === 0) this.#unfinishedByAgent.delete(record.agent);
    if (this.#newestByAgent.get(record.agent) === id) this.#newestByAgent.delete(record.agent);
  }
}

/** One map key for an agent and a key: the NUL cannot occur in an agent id. */
function idempotencyIndexKey(agentId: string, key: string): string {
  return `${agentId}\u0000${key}`;
}
