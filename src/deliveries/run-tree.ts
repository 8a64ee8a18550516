import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";
import type { RunTree } from "./notify-tool.js";

/** Parents looked up at most, past any nesting limits.max_agent_depth allows. */
const MAX_PARENTS = 64;

/** The runs' tree as their records tell it: each sub-agent's run names its parent run. */
export function runTreeOf(runs: { get(runId: string): RunRecord | undefined }): RunTree {
  return {
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
