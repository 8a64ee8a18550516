import type { UnfinishedRuns } from "./run-record-index.js";
import type { RunRecord } from "./run-record.js";

/**
 * Where run records are kept: the files in `data_dir` (RunStore) or PostgreSQL. Reads are served
 * from memory; `create` and `save` make a record durable before the caller publishes its status.
 */
export interface RunRecords {
  /** Every run, oldest first. */
  all(): RunRecord[];
  get(id: string): RunRecord | undefined;
  /** The newest run of an agent. */
  lastOf(agentId: string): RunRecord | undefined;
  /** An agent's runs not finished yet, from memory (of every node when the store is shared). */
  unfinishedOf(agentId: string): UnfinishedRuns;
  /**
   * The newest run of `agentId` created with this `idempotency_key`, from memory (of every node
   * when the store is shared), whatever its age; undefined when none.
   */
  findByIdempotencyKey(agentId: string, key: string): RunRecord | undefined;
  /** Runs queued and not started yet, of every agent. */
  queuedCount(): number;
  /** Registers a new run; resolves once it is durable (only then is it listed). */
  create(record: RunRecord): Promise<void>;
  /**
   * Replaces a run's record. The files store writes it off the event loop and returns a promise
   * that resolves once it is on disk (only then does `get` serve it); a store that orders the write
   * before the status event itself (PostgreSQL) serves it at once and returns nothing.
   */
  save(record: RunRecord): Promise<void> | void;
}
