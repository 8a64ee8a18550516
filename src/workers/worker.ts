import type { AgentEvent } from "../events/agent-event.js";
import type { ErrorCode } from "../errors/error-codes.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { RunCheckpoints } from "../checkpoints/checkpoint.js";
import type { RunControl } from "../runs/run-control.js";
import type { RunReason, RunStatus, Usage } from "../runs/run-status.js";

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
}

/** How a run ended, as a worker reports it. */
export interface RunOutcome {
  status: Extract<RunStatus, "completed" | "failed" | "stopped">;
  reason?: RunReason;
  /** Final answer text when completed; what was produced so far otherwise. */
  result?: string;
  usage: Usage;
  cost_usd: number;
  /** Which worker produced the result: "llm", "cli:claude", ... */
  worker: string;
  error?: { code: ErrorCode; message: string };
}

/** A way of executing a run: the LLM loop, a CLI tool, or a CLI tool with LLM fallback. */
export interface Worker {
  run(context: RunContext): Promise<RunOutcome>;
}
