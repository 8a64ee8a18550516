import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { RunTree } from "./notify-tool.js";
import { notificationsSentBefore, type TreeHistory } from "./notifications-sent.js";

/** Parents looked up at most, past any nesting limits.max_agent_depth allows. */
const MAX_PARENTS = 64;

/**
 * The runs' tree as their records tell it: each sub-agent's run names its parent run. With
 * `history` (and the time this daemon started counting), what a tree sent before is read from its
 * runs' logs.
 */
export function runTreeOf(
  runs: { get(runId: string): RunRecord | undefined },
  history?: { read: TreeHistory; since: number; now: () => number },
): RunTree {
  return {
    ...(history === undefined
      ? {}
      : {
          sentBefore: (root: string) =>
            notificationsSentBefore(root, { started: history.since, now: history.now() }, history.read),
        }),
    rootOf(runId) {
      let id = runId;
      for (let parents = 0; parents < MAX_PARENTS; parents++) {
        const parent = runs.get(id)?.parent_run;
        if (parent === undefined) return id;
        id = parent;
      }
      return id;
    },
    ended(runId) {
      const record = runs.get(runId);
      return record === undefined || isTerminal(record.status);
    },
  };
}
