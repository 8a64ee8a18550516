import type { RunRecord } from "../run-vocabulary/run-record.js";

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

/** What a node does with what the cluster tells it. */
export interface ClusterHandlers {
  control: (message: RunControlMessage) => void;
  deadNodeRuns: (node: string, runs: RunRecord[]) => void;
  /**
   * Runs this node held and holds no more: every one of them when it finds its lease expired (another
   * node took it for dead and took its runs), or the runs whose changes the store refused because
   * another node holds them now. This node must stop them without recording anything of them.
   */
  runsLost: (runs: string[] | "all", why: string) => void;
}

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
  /** Who handles actions sent to this node, runs taken over from dead nodes, and runs this node lost. */
  handle(handlers: ClusterHandlers): void;
}
