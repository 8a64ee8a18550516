import { AgentdError } from "../errors/agentd-error.js";
import type { ClusterMembership } from "./cluster-membership.js";

/**
 * The membership of a daemon alone on its store (files, one daemon per `data_dir`): a cluster of
 * one. It owns every run, no other node lists it or sends it anything, and none dies to hand runs
 * over: crash recovery at start does that for the daemon before it.
 */
export function singleNodeMembership(): ClusterMembership {
  return {
    node: undefined,
    ownsEveryRun: true,
    nodes: () => Promise.resolve([]),
    announce: () => Promise.resolve(),
    nodeOf: () => undefined,
    // Every run is this node's: nothing is ever sent elsewhere.
    sendControl: (message) =>
      Promise.reject(
        new AgentdError(
          "INTERNAL",
          `no node ${message.node} to send ${message.action} to: this daemon is alone`,
        ),
      ),
    // Queued runs wait in this process, where a stop ends them.
    withdraw: () => Promise.resolve({ withdrawn: false, node: undefined }),
    synced: () => Promise.resolve(),
    handle: () => undefined,
  };
}
