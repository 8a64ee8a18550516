import type { RunRecord } from "../../run-vocabulary/run-record.js";

/** A sub-agent's run asked for by its parent's model (an `agent__<id>` tool call). */
export interface ChildRunRequest {
  /** The run whose model made the call: its signal, pause and remaining time bound the child. */
  parentRun: string;
  /** The sub-agent's id. */
  agent: string;
  task: string;
  /** What is left of the parent's `max_tokens` and `max_cost_usd`: the child's limits are cut to it. */
  budget: { tokens: number; costUsd: number };
  /** The signal of the tool call that starts it: its trace span is the child's parent. */
  callSignal?: AbortSignal;
}

/**
 * Starts sub-agent runs and waits for them (the run manager in the daemon). A child is a full run
 * of its own agent, with `parent_run` set, events on its own agent's stream, and its own record.
 */
export interface ChildRuns {
  /** Resolves with the child's record once it ended; throws when it cannot start (depth, invalid). */
  runChild(request: ChildRunRequest): Promise<RunRecord>;
}
