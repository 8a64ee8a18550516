import type { Clock } from "../clock/clock.js";
import type { AgentEvent } from "../events/agent-event.js";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { Worker } from "../workers/worker.js";
import type { CheckpointRecords } from "../checkpoints/checkpoint-records.js";
import type { AgentLookup } from "./agent-availability.js";
import type { RunIdSource } from "./run-id.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunRecords } from "./run-records.js";
import type { RunQueue } from "./queue/run-queue.js";
import type { RunLife } from "./run-life.js";

/** What a RunManager is built with (the run core gives it; tests give their own). */
export interface RunManagerOptions {
  store: RunRecords;
  events: EventPublisher;
  agents: AgentLookup;
  /** The worker that executes runs of this definition (LLM, CLI with fallback, or a test's own). */
  workerFor: (definition: AgentDefinition) => Worker;
  /** Daemon-wide limit on runs in flight (config `concurrency`). */
  concurrency: number;
  /** The daemon's shutdown signal: the parent of every run's signal. */
  shutdownSignal: AbortSignal;
  logger: Logger;
  now?: () => Date;
  createRunId?: RunIdSource;
  /** Where LLM runs save their state after each round; without it runs cannot be resumed. */
  checkpoints?: CheckpointRecords;
  /** A run's events so far (the event store's, every node's): what a resumed run reads its answers in. */
  runHistory?: (run: string, agent: string) => Promise<AgentEvent[]>;
  /**
   * The event logs of new runs (the event store's): a queued run's log is held in memory, and
   * created off the event loop when the run launches, before its `running` event.
   */
  runLogs?: { hold(runId: string, agentId: string): void; open(runId: string): Promise<void> };
  /** Masks secret values in a record before it is written or served (the vault's redactor). */
  redact?: (record: RunRecord) => RunRecord;
  /**
   * Brings the redactor up to date with the vault (the daemon's secret learner) before a new run's
   * first record is masked and written: a secret set since the last read is masked there too.
   */
  secretsCurrent?: () => Promise<void>;
  /**
   * Starts a new run's trace and puts its id in its first record (telemetry); called once per run,
   * with a sub-agent's the signal of the tool call that starts it (its parent span).
   */
  traceNewRun?: (record: RunRecord, callSignal?: AbortSignal) => RunRecord;
  /** Told of each new run once its record is written (a sub-agent's too; not a duplicate start): the audit trail. */
  onRunCreated?: (record: RunRecord) => void;
  /**
   * Queue again the runs found `queued` at construction (default true: the daemon). `agentd run`
   * leaves them as they are, for the daemon's next start.
   */
  requeueQueuedRuns?: boolean;
  /**
   * Crash recovery at construction (default true). False on a shared store: the runs found
   * unfinished there belong to other nodes, which the lease watch ends if they die.
   */
  recover?: boolean;
  /**
   * Where runs started here wait for a slot (default: in this process, queue/local-run-queue.ts).
   * The daemon takes its store's: on PostgreSQL the cluster's queue (queue/cluster-run-queue.ts),
   * whose runs any node with a free slot claims.
   */
  runQueue?: ((life: RunLife) => RunQueue) | undefined;
  /** This node's id in the cluster, recorded in each run it executes. */
  node?: string | undefined;
  /** Runs each run's timeout (default: the system clock). */
  clock?: Clock;
  /** While the store is full, queued runs wait (not launched); they launch once it has room. */
  storage?: { readonly full: boolean; onChange(listener: (full: boolean) => void): () => void };
}
