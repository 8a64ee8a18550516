import type { RunsService } from "../api/api-services.js";
import type { Actor } from "../events/actor.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { RunManager } from "../runs/run-manager.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { ClusterMembership } from "../store/cluster-membership.js";

/**
 * The runs as the API serves them on a node of a cluster: stop, pause and resume of a run in
 * flight on another node are sent to that node, and a stop of a run still in the cluster's queue
 * takes it out of the queue (the answer is the record as this node knows it; the `status` event
 * follows); everything else is this node's run manager (all of it, on a cluster of one).
 */
export function clusterRuns(runs: RunManager, cluster: ClusterMembership, logger: Logger): RunsService {
  /** A run still in the cluster's queue: taken out before a node claims it, or stopped where it went. */
  const stopQueued = (record: RunRecord, actor: Actor | undefined): RunRecord => {
    cluster
      .withdraw(record.id)
      .then(async (withdrawal) => {
        if (withdrawal.withdrawn) runs.stopWithdrawn(record);
        else if (withdrawal.node === cluster.node) await runs.stop(record.id);
        else if (withdrawal.node !== undefined)
          return cluster.sendControl({
            node: withdrawal.node,
            run: record.id,
            action: "stop",
            ...actorField(actor),
          });
        return undefined;
      })
      .catch((error: unknown) => logger.warn({ err: error, run: record.id }, "could not stop a queued run"));
    return record;
  };
  const reported = async (acted: RunRecord | Promise<RunRecord>): Promise<RunRecord> => {
    const record = await acted;
    await cluster.synced();
    return record;
  };
  const act = async (id: string, action: RunAction, actor?: Actor): Promise<RunRecord> => {
    // A run posted on another node a moment ago may be in the database before this node's change
    // feed brings it here: GET /runs/:run finds it there, and so does an action on it.
    const record = runs.get(id) ?? (await runs.find(id));
    if (record?.status === "queued" && !runs.isHere(id)) {
      if (action === "stop") return stopQueued(record, actor);
      throw new AgentdError("CONFLICT", `cannot ${action} run ${id}: it is queued`, {
        hint: "a queued run has not started; stop it instead",
        details: { status: record.status },
      });
    }
    const node = cluster.nodeOf(id) ?? record?.node;
    if (record && !isTerminal(record.status) && node !== undefined && node !== cluster.node) {
      cluster
        .sendControl({ node, run: id, action, ...actorField(actor) })
        .catch((error: unknown) =>
          logger.warn({ err: error, run: id, node }, `could not send ${action} to the run's node`),
        );
      return record;
    }
    return runs[action](id);
  };
  return {
    start: (agentId, task) => runs.start(agentId, task),
    startOnce: (agentId, task, idempotencyKey) =>
      runs.startOnce(agentId, task, { kind: "api" }, idempotencyKey),
    list: (filter) => runs.list(filter),
    get: (id) => runs.get(id),
    find: (id) => runs.find(id),
    unfinished: () => runs.unfinished(),
    // The answer reports the record: it waits until that record is in the database.
    pause: async (id, options) => reported(act(id, "pause", options?.actor)),
    // A run cut off by a crash or a shutdown goes back to the cluster's queue, whichever node it ran on.
    resume: async (id, options) =>
      reported(
        runs.get(id)?.ended_at === undefined
          ? act(id, "resume", options?.actor)
          : await runs.resumeInterrupted(id),
      ),
    stop: async (id, options) => reported(act(id, "stop", options?.actor)),
    queueDepth: () => runs.queueDepth(),
  };
}

function actorField(actor: Actor | undefined): { actor?: Actor } {
  return actor === undefined ? {} : { actor };
}

/** What can be done to a run from any node. */
type RunAction = "stop" | "pause" | "resume";

/** Applies an action another node sent for a run of this node. */
export function applyControl(
  runs: RunManager,
  message: { run: string; action: RunAction; actor?: Actor },
  logger: Logger,
): void {
  // Who asked, on the node that forwarded it: in this node's log line of the action.
  logger.info({ run: message.run, actor: message.actor }, `${message.action} of a run as another node asked`);
  runs[message.action](message.run).catch((error: unknown) =>
    logger.warn({ err: error, run: message.run }, `could not ${message.action} a run as another node asked`),
  );
}
