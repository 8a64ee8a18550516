import type { Logger } from "../../logging/logger.js";
import type { AgentLookup } from "../agent-availability.js";
import type { RunManager } from "../run-manager.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

export interface TakeOverParts {
  runs: RunManager;
  agents: AgentLookup;
  logger: Logger;
}

/**
 * The unfinished runs of a node that stopped renewing its lease, handed to this node: its
 * sub-agent runs still queued fail with their parent; the others end `failed`/`crashed`, and those
 * whose agent has `resume: true` and that left a checkpoint go back to the cluster's queue to
 * continue from it on whichever node claims them (its other queued runs went back to the queue).
 */
export async function takeOverRuns(node: string, records: RunRecord[], parts: TakeOverParts): Promise<void> {
  for (const record of records) {
    if (record.status === "queued") {
      parts.runs.adoptQueued(record);
      continue;
    }
    const crashed = parts.runs.markCrashed(
      record,
      `its node ${node} stopped renewing its lease while the run was ${record.status}`,
    );
    const availability = parts.agents(crashed.agent);
    if (
      availability?.state !== "ready" ||
      !availability.definition.resume ||
      crashed.parent_run !== undefined
    )
      continue;
    try {
      await parts.runs.resumeInterrupted(crashed.id);
      parts.logger.info(
        { run: crashed.id, node },
        "run of a dead node queued again to resume from its checkpoint",
      );
    } catch (error) {
      parts.logger.warn({ err: error, run: crashed.id }, "could not resume a run of a dead node");
    }
  }
}

/**
 * Everything this node does when runs change hands in a cluster, as the membership's handlers:
 * a dead node's runs come here (takeOverRuns); runs this node lost (its lease expired, or another
 * node holds them now) are let go without a record (RunManager.relinquish: relinquish-runs.ts).
 */
export function takeOverHandlers(parts: TakeOverParts): {
  deadNodeRuns: (node: string, records: RunRecord[]) => void;
  runsLost: (ids: string[] | "all", why: string) => void;
} {
  return {
    deadNodeRuns: (node, records) => void takeOverRuns(node, records, parts),
    runsLost: (ids, why) => void parts.runs.relinquish(ids, why),
  };
}
