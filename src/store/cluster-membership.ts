import type { RunRecord } from "../runs/run-record.js";

/** One daemon of a cluster sharing a PostgreSQL store. */
export interface ClusterNodeInfo {
  id: string;
  name: string;
  url: string | null;
  started_at: string;
  lease_until: string;
}

/** An action on a run, sent to the node that runs it. */
export type RunControlMessage =
  | { node: string; run: string; action: "stop" | "pause" | "resume" }
  /** An answer to one of the run's pending approvals, given on another node. */
  | {
      node: string;
      run: string;
      action: "decide";
      approval: string;
      decision: "approve" | "deny";
      scope: "once" | "run";
    }
  /** An answer to one of the run's pending questions, given on another node. */
  | { node: string; run: string; action: "answer"; question: string; answer: string };

/** This daemon as a node of the cluster: who it is, who else is there, and messages between them. */
export interface ClusterMembership {
  readonly node: string;
  nodes(): Promise<ClusterNodeInfo[]>;
  /** Publishes this node's API URL in the node list. */
  announce(url: string): Promise<void>;
  /** The node that last wrote this run (the one running it while it is unfinished). */
  nodeOf(run: string): string | undefined;
  /**
   * Sends an action or an answer to the node running the run: resolves once it is committed (that
   * node reads it from its change feed); rejects with STORE_UNAVAILABLE while the store is away.
   */
  sendControl(message: RunControlMessage): Promise<void>;
  /** Who handles actions sent to this node, and runs taken over from dead nodes. */
  handle(handlers: {
    control: (message: RunControlMessage) => void;
    deadNodeRuns: (node: string, runs: RunRecord[]) => void;
  }): void;
}
