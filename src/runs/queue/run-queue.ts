import type { LiveRun } from "../live-runs.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

/**
 * Where a run started on this node waits until a node launches it: in this process
 * (LocalRunQueue: a daemon alone on its store, `agentd run`) or in the cluster's queue in
 * PostgreSQL (ClusterRunQueue: any node with a free slot claims it). Sub-agent runs and runs
 * adopted from a dead node always wait here, under their parent's slot or this node's limits.
 */
export interface RunQueue {
  /** Queues a new run; resolves with its record once it is durable and waiting. */
  add(run: LiveRun): Promise<RunRecord>;
  /** This node has free slots and launched what waited here: take more from elsewhere, if any. */
  fill(): void;
  /** Runs of an agent not finished yet, as overlap counts them (this node's, or the cluster's). */
  unfinishedOf(agentId: string): number;
  /** Runs of an agent waiting for a slot. */
  queuedOf(agentId: string): number;
  /** Runs waiting for a slot, of every agent. */
  depth(): number;
  /**
   * Resumes a run cut off by a crash or a shutdown (`ended`) from its checkpoint: here, or back in
   * the cluster's queue for whichever node claims it.
   */
  resumeInterrupted(ended: RunRecord): Promise<RunRecord>;
  /** `resume` of such a run: resumed here, or refused where it must go back to the cluster's queue. */
  resumeEnded(ended: RunRecord): RunRecord;
  /** Shutdown: takes no more work from elsewhere. */
  close(): void;
}
