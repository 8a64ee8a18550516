import type { AgentEvent } from "../events/agent-event.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { RunCheckpoints } from "../checkpoints/checkpoint.js";
import type { RunControl } from "../run-vocabulary/run-control.js";
import type { RunOutcome } from "../run-vocabulary/run-outcome.js";
import type { RunStatus, Usage } from "../run-vocabulary/run-status.js";

/** Everything a worker needs for one run. */
export interface RunContext {
  runId: string;
  definition: AgentDefinition;
  task: string;
  control: RunControl;
  events: EventPublisher;
  /** Where the LLM worker saves its state after each round, and the state a resumed run continues from. */
  checkpoints?: RunCheckpoints;
  /**
   * The run's events so far, wherever they were written (another node's included): a run resumed
   * from a checkpoint reads in them the answers given to its interrupted calls.
   */
  history?(): Promise<AgentEvent[]>;
  /**
   * Reports `waiting` (approval pending) and back to `running`; the run manager records it and
   * resolves once the record is on disk and the status told (the daemon's; a test's may return nothing).
   */
  setStatus(status: Extract<RunStatus, "running" | "waiting">): Promise<void> | void;
  /**
   * Reports one model call's usage and cost as soon as it is known (a call cut off by a budget
   * included), so a run that crashes later still shows what it spent. The outcome's totals are final.
   */
  recordSpending?(usage: Usage, costUsd: number): void;
  /**
   * Runs `job` once the runs launched with this one sent their first model request (at once when
   * none is under way): for work of the run that its first request need not wait for.
   */
  afterLaunches?(job: () => void): void;
}

/** A way of executing a run: the LLM loop, a CLI tool, or a CLI tool with LLM fallback. */
export interface Worker {
  run(context: RunContext): Promise<RunOutcome>;
}
