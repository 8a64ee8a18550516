import type { RunsService } from "../api/api-services.js";
import type { Logger } from "../logging/logger.js";
import type { RunManager } from "../runs/run-manager.js";
import type { RunRecord } from "../runs/run-record.js";
import { isTerminal } from "../runs/run-status.js";
import type { ClusterMembership, RunControlMessage } from "../store/cluster-membership.js";

/**
 * The runs as the API serves them on a node of a cluster: stop, pause and resume of a run in
 * flight on another node are sent to that node (the answer is the record as this node knows it;
 * the `status` event follows); everything else is this node's run manager.
 */
export function clusterRuns(runs: RunManager, cluster: ClusterMembership, logger: Logger): RunsService {
  const act = (id: string, action: RunControlMessage["action"]): RunRecord => {
    const record = runs.get(id);
    const node = cluster.nodeOf(id);
    if (record && !isTerminal(record.status) && node !== undefined && node !== cluster.node) {
      cluster
        .sendControl({ node, run: id, action })
        .catch((error: unknown) =>
          logger.warn({ err: error, run: id, node }, `could not send ${action} to the run's node`),
        );
      return record;
    }
    return runs[action](id);
  };
  return {
    start: (agentId, task) => runs.start(agentId, task),
    list: (filter) => runs.list(filter),
    get: (id) => runs.get(id),
    pause: (id) => act(id, "pause"),
    resume: (id) => act(id, "resume"),
    stop: (id) => act(id, "stop"),
    queueDepth: () => runs.queueDepth(),
  };
}

/** Applies an action another node sent for a run of this node. */
export function applyControl(runs: RunManager, message: RunControlMessage, logger: Logger): void {
  try {
    runs[message.action](message.run);
  } catch (error) {
    logger.warn({ err: error, run: message.run }, `could not ${message.action} a run as another node asked`);
  }
}
