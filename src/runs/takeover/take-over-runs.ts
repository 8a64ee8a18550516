import { type Clock, systemClock } from "../../clock/clock.js";
import type { Logger } from "../../logging/logger.js";
import { AgentdError } from "../../errors/agentd-error.js";
import type { AgentLookup } from "../agent-availability.js";
import type { RunManager } from "../run-manager.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";

export interface TakeOverParts {
  runs: RunManager;
  agents: AgentLookup;
  logger: Logger;
  /** Times the retries of a resume that failed because the store was away (default: the system clock). */
  clock?: Clock;
}

/** The first wait before a resume that failed on the store is tried again; it doubles up to the longest. */
const FIRST_RESUME_RETRY_MILLISECONDS = 500;
const LONGEST_RESUME_RETRY_MILLISECONDS = 10_000;

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
    await resumeTakenOver(crashed, node, parts);
  }
}

/**
 * Puts a taken-over run back in the queue to resume; a failure because the store was away
 * (STORE_UNAVAILABLE) is retried with back-off until the store answers (the resume is conditional:
 * a run another node resumed meanwhile is not put back twice). Any other failure is logged.
 */
async function resumeTakenOver(crashed: RunRecord, node: string, parts: TakeOverParts): Promise<void> {
  const clock = parts.clock ?? systemClock;
  let delay = FIRST_RESUME_RETRY_MILLISECONDS;
  for (;;) {
    try {
      await parts.runs.resumeInterrupted(crashed.id);
      parts.logger.info(
        { run: crashed.id, node },
        "run of a dead node queued again to resume from its checkpoint",
      );
      return;
    } catch (error) {
      if (!(error instanceof AgentdError && error.code === "STORE_UNAVAILABLE")) {
        parts.logger.warn({ err: error, run: crashed.id }, "could not resume a run of a dead node");
        return;
      }
      parts.logger.warn(
        { err: error, run: crashed.id, retry_in_ms: delay },
        "could not resume a run of a dead node: the store is away; trying again",
      );
      await new Promise<void>((resolve) => clock.setTimer(resolve, delay));
      delay = Math.min(delay * 2, LONGEST_RESUME_RETRY_MILLISECONDS);
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
