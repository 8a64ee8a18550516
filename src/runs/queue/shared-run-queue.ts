import type { Checkpoint } from "../../checkpoints/checkpoint.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

/** A run a node claimed: a new one, or one cut off by a crash or a shutdown, with its checkpoint. */
export interface ClaimedRun {
  record: RunRecord;
  /** The checkpoint a resumed run continues from. */
  resumeFrom?: Checkpoint;
}

/** What stopping a run still in the cluster's queue found. */
export type Withdrawal =
  /** Taken out of the queue: nobody will run it; the caller ends it. */
  | { withdrawn: true }
  /** Already claimed (or not queued any more): the node that has it, if any. */
  | { withdrawn: false; node: string | undefined };

/**
 * The cluster's queue of runs (PostgreSQL store): a run posted to any node waits in the database
 * until one node with a free slot claims it. Each claim keeps every agent's runs in flight across
 * the cluster within that agent's `max_concurrent_runs`.
 */
export interface SharedRunQueue {
  /**
   * Writes a new queued run for any node to claim; resolves once it is committed (then listed)
   * with its record. A run with an `idempotency_key` whose agent has a run with that key made
   * within the window (by any node) is not written: that run's record comes back instead.
   */
  post(record: RunRecord): Promise<RunRecord>;
  /**
   * Claims at most `count` queued runs, oldest first, each of an agent whose limit `limitOf` gives
   * (0: this node cannot run that agent and leaves its runs to the others). The runs come back as
   * they were queued (a resumed one with its checkpoint); the caller starts them.
   */
  claim(count: number, limitOf: (agentId: string) => number): Promise<ClaimedRun[]>;
  /**
   * Puts a run cut off by a crash or a shutdown (`ended`, as this node knows it) back in the queue
   * as `queued` to continue from its checkpoint, whichever node claims it. Only if the run is still
   * as `ended` (no other node resumed it first) and left a checkpoint: resolves with that
   * checkpoint, or undefined when it did nothing.
   */
  requeue(queued: RunRecord, ended: RunRecord): Promise<Checkpoint | undefined>;
  /** Puts runs this node claimed but will not start (it is stopping) back for the others. */
  release(runs: string[]): Promise<void>;
  /** Takes a queued run out of the queue before any node claims it (a stop). */
  withdraw(run: string): Promise<Withdrawal>;
  /** Calls `listener` when work may be waiting: a run was queued or one ended, and on a slow beat. */
  onWork(listener: () => void): () => void;
}
