import type { Withdrawal } from "../runs/queue/shared-run-queue.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { Actor } from "../events/actor.js";

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
  /** `actor`: who asked, on the node that forwarded it (its log line; the audit entry is that node's). */
  | { node: string; run: string; action: "stop" | "pause" | "resume"; actor?: Actor }
  /** An answer to one of the run's pending approvals, given on another node. */
  | {
      node: string;
      run: string;
      action: "decide";
      approval: string;
      decision: "approve" | "deny";
      scope: "once" | "run";
      /** Who decided, for the approval event. */
      actor?: Actor;
    }
  /** An answer to one of the run's pending questions, given on another node. */
  | { node: string; run: string; action: "answer"; question: string; answer: string; actor?: Actor };

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

/**
 * Whether this node's cluster lease is known to hold: read before every model call, tool call and
 * CLI start of a run (false: the run waits at that step), and each change (true again once a
 * renewal succeeded; a node whose lease was lost meanwhile lets its runs go first).
 */
export interface LeaseWatch {
  held(): boolean;
  onChange(listener: (held: boolean) => void): () => void;
}

/**
 * This daemon as a node of the cluster: who it is, who else is there, and messages between them.
 * A daemon alone on its store (files) is a cluster of one (single-node-membership.ts): nobody else
 * to tell, to ask or to take runs from.
 */
export interface ClusterMembership {
  /** This node's id; undefined for a daemon alone on its store (its runs and /health name no node). */
  readonly node: string | undefined;
  /**
   * Whether every unfinished run found at start is this node's to recover (a daemon alone on its
   * store); in a cluster they are the other nodes', which the lease watch hands over if they die.
   */
  readonly ownsEveryRun: boolean;
  /** This node's lease (a cluster); undefined for a daemon alone on its store. */
  readonly lease?: LeaseWatch;
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
  /** Takes a run still in the cluster's queue out before any node claims it (a stop). */
  withdraw(run: string): Promise<Withdrawal>;
  /** Resolves once every change this node made so far is where the other nodes read it. */
  synced(): Promise<void>;
  /** Who handles actions sent to this node, runs taken over from dead nodes, and runs this node lost. */
  handle(handlers: ClusterHandlers): void;
}
