import type { UnfinishedRuns } from "./run-record-index.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunListQuery } from "./run-filter.js";

/** `GET /runs`'s `limit` when none is given, and the most one page holds. */
export const DEFAULT_RUN_LIST_LIMIT = 100;
export const MAX_RUN_LIST_LIMIT = 1_000;

/**
 * Where run records are kept: files in `data_dir` (RunStore) or PostgreSQL. `create` and `save`
 * make a record durable before the caller publishes its status; nothing is served before that.
 *
 * Start-up reads only what the running daemon needs: the unfinished runs (recovery), the runs a
 * crash or shutdown cut off (resume), each agent's newest run and the counts. Any other run is
 * read when asked for (`get`, `list`), so memory and start-up time do not grow with history.
 */
export interface RunRecords {
  /** One run, wherever it is kept; undefined for an unknown (or pruned) run. */
  get(id: string): RunRecord | undefined;
  /**
   * A page of runs, newest first (creation order), matching every filter given. Throws
   * AgentdError NOT_FOUND when `before` names no listed run.
   */
  list(query: RunListQuery): Promise<RunRecord[]>;
  /** One run, also one not held in memory (read from its file or the database). */
  find(id: string): Promise<RunRecord | undefined>;
  /** Every run not finished yet (queued, running, paused, waiting), oldest first: crash recovery. */
  unfinished(): RunRecord[];
  /**
   * Every run a crash or a shutdown cut off (`failed`/`crashed`, `stopped`/`daemon_shutdown`) and
   * not resumed or pruned since, oldest first: what `resume: true` may continue at start.
   */
  interrupted(): RunRecord[];
  /** The newest run of an agent. */
  lastOf(agentId: string): RunRecord | undefined;
  /** An agent's runs not finished yet, from memory (of every node when the store is shared). */
  unfinishedOf(agentId: string): UnfinishedRuns;
  /**
   * The newest run of `agentId` created with this `idempotency_key`, from memory (of every node
   * when the store is shared), whatever its age; undefined when none.
   */
  findByIdempotencyKey(agentId: string, key: string): RunRecord | undefined;
  /**
   * `findByIdempotencyKey` asked of the store itself: on a shared store, also a run another node
   * committed that this one has not read yet, or one no longer held in memory.
   */
  readByIdempotencyKey(agentId: string, key: string): Promise<RunRecord | undefined>;
  /** Runs queued and not started yet, of every agent. */
  queuedCount(): number;
  /** Registers a new run; resolves once it is durable (only then is it listed). */
  create(record: RunRecord): Promise<void>;
  /**
   * Replaces a run's record. The files store writes it off the event loop and returns a promise
   * that resolves once it is on disk (only then does `get` serve it); a store that orders the write
   * before the status event itself (PostgreSQL) returns nothing and serves it once committed.
   * `issueAfter` (a launch's: its first model request being out) is what work on libuv's threads
   * that the run's `running` does not wait for may queue behind; a store may ignore it.
   */
  save(record: RunRecord, options?: { issueAfter?: Promise<void> | undefined }): Promise<void> | void;
  /**
   * A store whose `save` returns nothing: the newest record of the run saved and not durable yet
   * (not served), for decisions taken meanwhile (RunRecorder.newest).
   */
  unwritten?(id: string): RunRecord | undefined;
}
