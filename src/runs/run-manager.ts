import { performance } from "node:perf_hooks";
import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventPublisher } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunContext, RunOutcome, Worker } from "../workers/worker.js";
import type { Checkpoint } from "../checkpoints/checkpoint.js";
import type { CheckpointRecords } from "../checkpoints/checkpoint-records.js";
import type { AgentLookup } from "./agent-availability.js";
import type { ChildRunRequest, ChildRuns } from "./child-runs.js";
import { runReasonOf } from "./abort-ending.js";
import { RunControl } from "./run-control.js";
import { type RunIdSource, createRunIdSource } from "./run-id.js";
import { executeRun } from "./execute-run.js";
import { IdleWaiters } from "./idle-waiters.js";
import { InFlightCounts } from "./in-flight-counts.js";
import { recordPatchOf, statusForReason } from "./run-outcome.js";
import { unsandboxedRunWarning } from "../sandbox/unsandboxed-warnings.js";
import type { RunRecord, RunTrigger } from "./run-record.js";
import {
  EMPTY_USAGE,
  type RunReason,
  type RunStatus,
  type Usage,
  addUsage,
  isTerminal,
} from "./run-status.js";
import { pickTask, runnableDefinition } from "./runnable-definition.js";
import { DEFAULT_RUN_LIST_LIMIT, type RunRecords } from "./run-records.js";
import { crashedRecord, recoverInterruptedRuns } from "./recover-runs.js";
import { OrderedPublications } from "./ordered-publications.js";
import { PacedJobs } from "../util/paced-jobs.js";
import type { ClaimedRun, SharedRunQueue } from "./shared-run-queue.js";

/** How long one tick may spend launching runs before the rest waits for the next tick. */
const DISPATCH_SLICE_MILLISECONDS = 5;
/**
 * Runs launched per tick at most. A launch goes on after the tick that made it (the worker lists
 * its tools, saves a checkpoint, builds its first model request and connects): that time is not in
 * the slice above, so the count bounds it. Between ticks the event loop answers requests.
 */
const LAUNCHES_PER_TICK = 2;
/**
 * While new runs are being recorded (a burst of requests), launches wait so that the requests are
 * answered first, but no longer than this: past it, launches go on (a few per tick) however long
 * the stream of new runs lasts, so it does not starve the queue.
 */
const LAUNCH_HOLD_MILLISECONDS = 500;
/**
 * A new run recorded within this long of the one before continues a burst; from BURST_RUNS runs on,
 * launches wait until no new run came for this long (a record is written within a turn of the event
 * loop, so the runs of a burst are seldom being written at the same moment). A few runs created
 * together launch at once.
 */
const BURST_GAP_MILLISECONDS = 50;
const BURST_RUNS = 8;

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
  /**
   * The event logs of new runs (the event store's): a queued run's log is held in memory, and
   * created off the event loop when the run launches, before its `running` event.
   */
  runLogs?: { hold(runId: string, agentId: string): void; open(runId: string): Promise<void> };
  /** Masks secret values in a record before it is written or served (the vault's redactor). */
  redact?: (record: RunRecord) => RunRecord;
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
   * The cluster's queue (PostgreSQL store, daemon only): runs started here are queued there and
   * run by whichever node claims them; this node claims while it has free slots.
   */
  sharedQueue?: SharedRunQueue | undefined;
  /** This node's id in the cluster, recorded in each run it executes. */
  node?: string | undefined;
}

/** Filters of `GET /runs`. */
export interface RunFilter {
  agent?: string | undefined;
  status?: RunStatus | undefined;
  /** Only the sub-agent runs this run started. */
  parent?: string | undefined;
  /** Only runs created at or after this time. */
  since?: Date | undefined;
  /** Only runs created before this run (a page's cursor: the last run of the page before). */
  before?: string | undefined;
  /** At most this many, the newest. */
  limit?: number | undefined;
}

/** A run not finished yet: queued, or in flight with its control. */
interface LiveRun {
  record: RunRecord;
  definition: AgentDefinition;
  control?: RunControl;
  /** What the worker last reported; a paused run returns to it on resume. */
  workerStatus: "running" | "waiting";
  /** 0 for a run started by a user or a schedule; a sub-agent's run is its parent's depth + 1. */
  depth: number;
  /** A sub-agent's run: its parent's control, whose stop stops it and whose time bounds it. */
  parentControl?: RunControl;
  /** Called with the final record (a parent waiting for its sub-agent). */
  onEnd?: (record: RunRecord) => void;
  /** A resumed run: the checkpoint it continues from. */
  resumeFrom?: Checkpoint;
}

/**
 * Runs agents: a FIFO queue under the daemon-wide `concurrency` and each agent's
 * `max_concurrent_runs`, one RunControl per run (stop, pause, timeout, shutdown), durable records
 * written before each status change is published, and crash recovery at construction. Records are
 * written off the event loop: a status event goes out once its record is on disk, and the run's
 * other events made meanwhile wait behind it, so each run's events keep their order.
 */
export class RunManager implements ChildRuns {
  readonly #options: RunManagerOptions;
  readonly #now: () => Date;
  readonly #createRunId: RunIdSource;
  readonly #redact: (record: RunRecord) => RunRecord;
  readonly #live = new Map<string, LiveRun>();
  readonly #queue: string[] = [];
  readonly #inFlight = new InFlightCounts();
  readonly #idle = new IdleWaiters();
  readonly #publications: OrderedPublications;
  /** Records saved but not on disk yet (the store serves them once they are), by run id. */
  readonly #unwritten = new Map<string, RunRecord>();
  readonly #workerStarts = new PacedJobs(LAUNCHES_PER_TICK);
  #accepting = true;
  #dispatchScheduled = false;
  /** New runs whose record is being written (start); launches wait while there are any. */
  #creating = 0;
  /** Since when launches have been held for runs being created. */
  #heldSince: number | undefined;
  /** When the last new run was recorded, and how many runs the burst it is part of has. */
  #lastCreated = Number.NEGATIVE_INFINITY;
  #burstRuns = 0;
  #burstTimer: NodeJS.Timeout | undefined;
  /** A claim on the shared queue in flight, and whether another was asked for meanwhile. */
  #claiming = false;
  #claimAgain = false;
  readonly #stopClaiming: () => void;
  /** Runs recovery marked failed/crashed at start-up. */
  readonly recovered: RunRecord[];
  /** Runs found `queued` at start-up and queued again, in their order. */
  readonly requeued: RunRecord[] = [];

  constructor(options: RunManagerOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#createRunId = options.createRunId ?? createRunIdSource(this.#now);
    this.#redact = options.redact ?? ((record) => record);
    this.#publications = new OrderedPublications(options.logger);
    const recovered =
      options.recover === false
        ? { crashed: [], queued: [] }
        : recoverInterruptedRuns(options.store, (record, message) => this.markCrashed(record, message));
    this.recovered = recovered.crashed;
    if (options.requeueQueuedRuns ?? true) for (const record of recovered.queued) this.#requeue(record);
    this.#stopClaiming = options.sharedQueue?.onWork(() => this.#claim()) ?? (() => undefined);
    this.#dispatch();
  }

  /**
   * Queues a run found `queued` after a restart again, on the agent's current definition (it had not
   * started); a run whose agent is gone, invalid or disabled now fails with its reason in the record.
   */
  #requeue(record: RunRecord): void {
    // A sub-agent's run belongs to its parent's run, which the crash ended: nobody waits for it.
    if (record.parent_run !== undefined) {
      this.#failQueued(record, `its parent run ${record.parent_run} was interrupted by the restart`);
      return;
    }
    let definition: AgentDefinition;
    try {
      definition = runnableDefinition(this.#options.agents, record.agent);
    } catch (error) {
      this.#failQueued(record, error instanceof Error ? error.message : String(error));
      return;
    }
    const live: LiveRun = {
      record: { ...record, definition_hash: definition.hash },
      definition,
      workerStatus: "running",
      depth: 0,
    };
    this.#live.set(record.id, live);
    this.#queue.push(record.id);
    this.#transition(live, {}, "queued again after the daemon restarted");
    this.requeued.push(live.record);
  }

  /** Queues here a run that was queued on a node that died (shared store): it had not started. */
  adoptQueued(record: RunRecord): void {
    this.#requeue(record);
    this.#dispatch();
  }

  #failQueued(record: RunRecord, why: string): void {
    const message = `queued before a restart, but cannot run now: ${why}`;
    this.#endUnstarted(
      record,
      { status: "failed", reason: "crashed", error: { code: "CONFLICT", message } },
      message,
    );
  }

  /** Queues a run of `agentId`; it starts as soon as the limits allow. */
  async start(agentId: string, task?: string, trigger: RunTrigger = { kind: "api" }): Promise<RunRecord> {
    if (!this.#accepting) {
      throw new AgentdError(
        "SHUTTING_DOWN",
        `cannot start a run of ${agentId}: the daemon is shutting down`,
        {
          hint: "start the run again once the daemon is back",
        },
      );
    }
    const definition = runnableDefinition(this.#options.agents, agentId);
    const resolvedTask = pickTask(task, definition);
    const record = this.#redact({
      id: this.#createRunId(),
      agent: agentId,
      task: resolvedTask,
      status: "queued",
      trigger,
      definition_hash: definition.hash,
      created_at: this.#now().toISOString(),
      usage: EMPTY_USAGE,
      cost_usd: 0,
    });
    if (this.#options.sharedQueue) return this.#post(this.#options.sharedQueue, record);
    // Counted as the agent's (overlap, queue limit) while its record is being written.
    const live: LiveRun = { record, definition, workerStatus: "running", depth: 0 };
    this.#live.set(record.id, live);
    this.#creating += 1;
    try {
      await this.#createRecord(record);
    } catch (error) {
      this.#live.delete(record.id);
      this.#notifyIdleWhenSettled();
      throw storeFailure(record, error);
    } finally {
      this.#creating -= 1;
      const now = performance.now();
      this.#burstRuns = now - this.#lastCreated < BURST_GAP_MILLISECONDS ? this.#burstRuns + 1 : 1;
      this.#lastCreated = now;
      // The last of a burst releases the launches it held.
      if (this.#creating === 0 && this.#heldSince !== undefined) this.#dispatchSoon();
    }
    this.#publishStatus(record);
    // A shutdown that came while the record was written: the run never starts.
    if (!this.#live.has(record.id)) return this.#newest(record.id) ?? record;
    if (!this.#accepting) {
      const why = "the daemon shut down before the run started";
      return this.#end(live, { status: "stopped", reason: "daemon_shutdown" }, why);
    }
    this.#queue.push(record.id);
    // Workers start outside the tick that answers the request.
    this.#dispatchSoon();
    return record;
  }

  /** Queues a new run for the cluster: the node that claims it runs it (maybe this one). */
  async #post(queue: SharedRunQueue, record: RunRecord): Promise<RunRecord> {
    try {
      await queue.post(record);
    } catch (error) {
      throw storeFailure(record, error);
    }
    this.#publishStatus(record);
    return record;
  }

  /**
   * Claims from the cluster's queue as many runs as this node has free slots (one claim at a
   * time; asked again meanwhile, it claims again after) and starts them here.
   */
  #claim(): void {
    const queue = this.#options.sharedQueue;
    if (!queue || !this.#accepting) return;
    if (this.#claiming) {
      this.#claimAgain = true;
      return;
    }
    let waitingHere = 0;
    for (const id of this.#queue) if (!this.#live.get(id)?.parentControl) waitingHere += 1;
    const free = this.#options.concurrency - this.#inFlight.total - waitingHere;
    if (free <= 0) return;
    this.#claiming = true;
    queue
      .claim(free, (agentId) => {
        const availability = this.#options.agents(agentId);
        return availability?.state === "ready" ? availability.definition.limits.max_concurrent_runs : 0;
      })
      .then(async (claimed) => {
        // Stopping meanwhile: the others run them.
        if (!this.#accepting) return queue.release(claimed.map(({ record }) => record.id));
        for (const run of claimed) this.#startClaimed(run);
        // All slots filled: more may be waiting for the next free one.
        if (claimed.length === free) this.#claimAgain = true;
      })
      .catch((error: unknown) =>
        this.#options.logger.warn({ err: error }, "could not claim runs from the cluster's queue"),
      )
      .finally(() => {
        this.#claiming = false;
        if (this.#claimAgain) {
          this.#claimAgain = false;
          this.#claim();
        }
      });
  }

  /**
   * Starts a run this node claimed from the cluster's queue, on this node's definition; a run put
   * back after a crash or a shutdown continues from its checkpoint.
   */
  #startClaimed({ record: claimed, resumeFrom }: ClaimedRun): void {
    let definition: AgentDefinition;
    try {
      definition = runnableDefinition(this.#options.agents, claimed.agent);
    } catch (error) {
      const why = `claimed by a node that cannot run it: ${error instanceof Error ? error.message : String(error)}`;
      this.#endUnstarted(claimed, { status: "failed", error: { code: "CONFLICT", message: why } }, why);
      return;
    }
    const live: LiveRun = {
      record: { ...claimed, definition_hash: definition.hash },
      definition,
      workerStatus: "running",
      depth: 0,
      ...(resumeFrom === undefined ? {} : { resumeFrom }),
    };
    this.#live.set(claimed.id, live);
    this.#launch(live);
  }

  /** Whether this node holds the run: queued here or in flight here. */
  isHere(id: string): boolean {
    return this.#live.has(id);
  }

  /** Ends as stopped a run this node took out of the cluster's queue before anyone claimed it. */
  stopWithdrawn(record: RunRecord): RunRecord {
    return this.#endUnstarted(
      record,
      { status: "stopped", reason: "user_stop" },
      "stopped before it started",
    );
  }

  /** Ends a run that never started here (no slot, no control): its record, then its status event. */
  #endUnstarted(record: RunRecord, patch: Partial<RunRecord>, message: string): RunRecord {
    const ended = this.#redact({ ...record, ...patch, ended_at: this.#now().toISOString() });
    void this.#publishAfterWrite(ended, message);
    return ended;
  }

  /**
   * Ends a run interrupted by a crash (found at start-up, or left by a dead node) `failed`/`crashed`,
   * keeping the usage and cost it had recorded: its record, then its status event.
   */
  markCrashed(record: RunRecord, message: string): RunRecord {
    const crashed = crashedRecord(record, this.#now(), message);
    void this.#publishAfterWrite(crashed, message);
    return crashed;
  }

  /**
   * Runs a sub-agent for a parent in flight and resolves with the child's final record. The child
   * inherits what is left of the parent's token and cost budgets and of its time, is stopped with
   * it, and takes no slot of the daemon-wide `concurrency` (its parent holds one and waits for it:
   * queueing it behind that limit could deadlock); its own agent's `max_concurrent_runs` applies.
   */
  async runChild(request: ChildRunRequest): Promise<RunRecord> {
    const parent = this.#live.get(request.parentRun);
    if (!parent?.control) {
      throw new AgentdError("CONFLICT", `run ${request.parentRun} is not in flight`, {
        hint: "a sub-agent can only be started by a running run",
      });
    }
    if (!this.#accepting) {
      throw new AgentdError("SHUTTING_DOWN", `cannot start ${request.agent}: the daemon is shutting down`);
    }
    const depth = parent.depth + 1;
    const maxDepth = parent.definition.limits.max_agent_depth;
    if (depth > maxDepth) {
      throw new AgentdError(
        "AGENT_DEPTH_EXCEEDED",
        `cannot start sub-agent ${request.agent}: runs may nest ${maxDepth} levels deep (limits.max_agent_depth)`,
        { hint: "answer the task yourself, or raise limits.max_agent_depth", details: { depth, maxDepth } },
      );
    }
    const parentControl = parent.control;
    const definition = childDefinition(runnableDefinition(this.#options.agents, request.agent), {
      tokens: request.budget.tokens,
      costUsd: request.budget.costUsd,
      milliseconds: parentControl.remainingMilliseconds(),
    });
    const record = this.#redact({
      id: this.#createRunId(),
      agent: request.agent,
      task: request.task,
      status: "queued",
      trigger: { kind: "agent", parent_run: request.parentRun },
      parent_run: request.parentRun,
      definition_hash: definition.hash,
      created_at: this.#now().toISOString(),
      usage: EMPTY_USAGE,
      cost_usd: 0,
    });
    await this.#createRecord(record).catch((error: unknown) => {
      throw storeFailure(record, error);
    });
    this.#publishStatus(record);
    return new Promise<RunRecord>((resolve) => {
      const child: LiveRun = {
        record,
        definition,
        workerStatus: "running",
        depth,
        parentControl,
        onEnd: resolve,
      };
      this.#live.set(record.id, child);
      // A child still queued when its parent stops never starts.
      const stopQueued = () => {
        if (child.control || !this.#live.has(record.id)) return;
        this.#dequeue(record.id);
        const reason = runReasonOf(parentControl.signal) ?? "user_stop";
        this.#end(child, { status: statusForReason(reason), reason }, "its parent run ended first");
      };
      this.#queue.push(record.id);
      // The parent may have stopped while the record was written.
      if (parentControl.signal.aborted) stopQueued();
      else parentControl.signal.addEventListener("abort", stopQueued, { once: true });
      this.#dispatch();
    });
  }

  /** Writes a new run's record; its event log is created when it launches (see `runLogs`). */
  async #createRecord(record: RunRecord): Promise<void> {
    await this.#options.store.create(record);
    this.#options.runLogs?.hold(record.id, record.agent);
  }

  /** Runs newest first, optionally of one agent, in one status, of one parent, since a time, at most `limit`. */
  list(filter: RunFilter = {}): RunRecord[] {
    return this.#options.store.list({ ...filter, limit: filter.limit ?? DEFAULT_RUN_LIST_LIMIT });
  }

  get(id: string): RunRecord | undefined {
    return this.#options.store.get(id);
  }

  /** The newest run of an agent. */
  lastRun(agentId: string): RunRecord | undefined {
    return this.#options.store.lastOf(agentId);
  }

  /** Runs of an agent not finished yet (queued, running, paused or waiting). */
  unfinishedRuns(agentId: string): number {
    // On a shared queue, the cluster's runs: overlap counts the agent's runs on every node.
    if (this.#options.sharedQueue) return this.#options.store.unfinishedOf(agentId).unfinished;
    let count = 0;
    for (const run of this.#live.values()) if (run.record.agent === agentId) count += 1;
    return count;
  }

  /** Runs of an agent waiting for a slot (not started yet). */
  queuedRuns(agentId: string): number {
    if (this.#options.sharedQueue) return this.#options.store.unfinishedOf(agentId).queued;
    let count = 0;
    for (const run of this.#live.values()) {
      if (run.record.agent === agentId && run.record.status === "queued") count += 1;
    }
    return count;
  }

  queueDepth(): number {
    if (this.#options.sharedQueue) return this.#options.store.queuedCount();
    return this.#queue.length;
  }

  /**
   * Pauses a running or waiting run; pausing a paused run changes nothing. Resolves with the record
   * once it is on disk and its status event published.
   */
  async pause(id: string): Promise<RunRecord> {
    return this.#reported(this.#pause(id));
  }

  /**
   * Resumes a paused run where it was (running, or waiting for an approval), or a run cut off by a
   * crash or a shutdown (`failed`/`crashed`, `stopped`/`daemon_shutdown`) from its last checkpoint.
   * Resolves with the record once it is on disk and its status event published.
   */
  async resume(id: string): Promise<RunRecord> {
    return this.#reported(this.#resume(id));
  }

  /**
   * The record an action returns, once every change of its run so far is on disk and published, and
   * those of the sub-agent runs it carried along (a paused parent pauses its children).
   */
  async #reported(record: RunRecord): Promise<RunRecord> {
    const family = [record.id, ...this.#descendantsOf(record.id)];
    await Promise.all(family.map((id) => this.#publications.published(id)));
    return record;
  }

  #descendantsOf(id: string): string[] {
    return this.#childrenOf(id).flatMap((child) => [
      child.record.id,
      ...this.#descendantsOf(child.record.id),
    ]);
  }

  #pause(id: string): RunRecord {
    const run = this.#liveRun(id, "pause");
    if (run.record.status === "paused") return run.record;
    if (!run.control) throw conflict(run.record, "pause", "a queued run has not started; stop it instead");
    run.control.pause();
    const record = this.#transition(run, { status: "paused" });
    for (const child of this.#childrenOf(id))
      if (child.control && child.record.status !== "paused") this.#pause(child.record.id);
    return record;
  }

  #resume(id: string): RunRecord {
    const ended = this.#live.has(id) ? undefined : this.#newest(id);
    if (ended && isResumable(ended)) {
      if (this.#options.sharedQueue)
        throw conflict(ended, "resume", "on a cluster the run goes back to the queue: resumeInterrupted");
      return this.#resumeInterrupted(ended);
    }
    const run = this.#liveRun(id, "resume");
    if (run.record.status !== "paused" || !run.control) {
      if (run.record.status === "running" || run.record.status === "waiting") return run.record;
      throw conflict(run.record, "resume", "only a paused run can be resumed");
    }
    run.control.resume();
    const record = this.#transition(run, { status: run.workerStatus });
    for (const child of this.#childrenOf(id))
      if (child.record.status === "paused") this.#resume(child.record.id);
    return record;
  }

  /**
   * At start: resumes every run cut off by the last crash or shutdown whose agent has `resume: true`
   * and that left a checkpoint. Returns the runs resumed.
   */
  async resumeInterruptedRuns(): Promise<RunRecord[]> {
    const resumed: RunRecord[] = [];
    for (const stored of this.#options.store.interrupted()) {
      const record = this.#newest(stored.id) ?? stored;
      if (!isResumable(record) || record.parent_run !== undefined) continue;
      const availability = this.#options.agents(record.agent);
      if (availability?.state !== "ready" || !availability.definition.resume) continue;
      if (!this.#options.checkpoints?.load(record.id)) continue;
      try {
        resumed.push(await this.resumeInterrupted(record.id));
      } catch (error) {
        this.#options.logger.warn({ err: error, run: record.id }, "could not resume an interrupted run");
      }
    }
    return resumed;
  }

  /**
   * Resumes a run cut off by a crash or a shutdown from its last checkpoint (any other run: as
   * `resume`). On a cluster the run goes back to the cluster's queue and continues on whichever
   * node claims it, within the agent's cluster-wide `max_concurrent_runs`; when two nodes try at
   * once (a start, a lease takeover, a POST), one puts it back and the other gets CONFLICT.
   */
  async resumeInterrupted(id: string): Promise<RunRecord> {
    const queue = this.#options.sharedQueue;
    const ended = this.#newest(id);
    if (!queue || !ended || !isResumable(ended)) return this.resume(id);
    const { record } = this.#resumed(ended);
    let checkpoint: Checkpoint | undefined;
    try {
      checkpoint = await queue.requeue(record, ended);
    } catch (error) {
      throw storeFailure(record, error);
    }
    if (!checkpoint) {
      const now = this.#options.store.get(id) ?? ended;
      if (now.status !== ended.status || now.ended_at !== ended.ended_at)
        throw conflict(now, "resume", "another node resumed it first");
      throw conflict(ended, "resume", "the run left no checkpoint (only LLM runs save one after each round)");
    }
    this.#publishResumed(record, checkpoint);
    return record;
  }

  /** A run cut off by a crash or a shutdown, queued again on the agent's current definition. */
  #resumed(ended: RunRecord): { record: RunRecord; definition: AgentDefinition } {
    if (!this.#accepting)
      throw new AgentdError("SHUTTING_DOWN", `cannot resume ${ended.id}: the daemon is shutting down`);
    const definition = runnableDefinition(this.#options.agents, ended.agent);
    const { reason: _reason, error: _error, ended_at: _endedAt, result: _result, ...kept } = ended;
    return {
      record: this.#redact({ ...kept, status: "queued", definition_hash: definition.hash }),
      definition,
    };
  }

  #publishResumed(record: RunRecord, checkpoint: Checkpoint): void {
    this.#publishStatus(record, resumedMessage(checkpoint), {
      resumed_from_round: checkpoint.round,
    });
  }

  #resumeInterrupted(ended: RunRecord): RunRecord {
    const checkpoint = this.#options.checkpoints?.load(ended.id);
    if (!checkpoint) {
      throw conflict(ended, "resume", "the run left no checkpoint (only LLM runs save one after each round)");
    }
    const { record, definition } = this.#resumed(ended);
    void this.#publishAfterWrite(record, resumedMessage(checkpoint), {
      resumed_from_round: checkpoint.round,
    });
    this.#live.set(record.id, {
      record,
      definition,
      workerStatus: "running",
      depth: 0,
      resumeFrom: checkpoint,
    });
    this.#queue.push(record.id);
    this.#dispatch();
    return record;
  }

  /** The sub-agent runs of a run that are not finished. */
  #childrenOf(id: string): LiveRun[] {
    return [...this.#live.values()].filter((run) => run.record.parent_run === id);
  }

  /**
   * Stops a run with reason `user_stop`. A queued run ends at once; a run in flight has its signal
   * aborted and ends when its worker returns (the `status` event says so). Resolves with the record
   * once it is on disk and its status event published.
   */
  async stop(id: string): Promise<RunRecord> {
    return this.#reported(this.#stop(id));
  }

  #stop(id: string): RunRecord {
    const run = this.#liveRun(id, "stop");
    if (!run.control) {
      this.#dequeue(id);
      return this.#end(run, { status: "stopped", reason: "user_stop" }, "stopped before it started");
    }
    run.control.stop("user_stop", "stopped by a user");
    return run.record;
  }

  /** Shutdown, first step: new runs are refused with SHUTTING_DOWN and queued runs are stopped. */
  stopAccepting(): void {
    this.#accepting = false;
    this.#stopClaiming();
    for (const id of [...this.#queue]) {
      const run = this.#live.get(id);
      this.#dequeue(id);
      if (run)
        this.#end(
          run,
          { status: "stopped", reason: "daemon_shutdown" },
          "the daemon shut down before the run started",
        );
    }
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /**
   * Resolves true once no run is in flight and every status change is on disk and published, or
   * false when `timeoutMilliseconds` passes first.
   */
  waitUntilIdle(timeoutMilliseconds: number): Promise<boolean> {
    return this.#idle.wait(this.#live.size === 0 && this.#publications.waiting === 0, timeoutMilliseconds);
  }

  /** Resolves once every status change so far is on disk and published (before the logs close). */
  published(): Promise<void> {
    return this.#publications.settled();
  }

  /** Tells the idle waiters once no run is in flight and the last status changes are published. */
  #notifyIdleWhenSettled(): void {
    if (this.#live.size > 0) return;
    void this.#publications.settled().then(() => {
      if (this.#live.size === 0) this.#idle.notifyIdle();
    });
  }

  /** Last resort of shutdown: records runs whose workers ignored their aborted signal as stopped. */
  abandonUnfinished(reason: RunReason): void {
    for (const run of [...this.#live.values()]) {
      run.control?.stop(reason);
      this.#end(run, { status: "stopped", reason }, "the worker did not stop in time");
    }
  }

  /**
   * Runs this node no longer holds (a cluster took it for dead and took its runs, or another node
   * holds the run now), with their sub-agents' runs: their workers are stopped, and nothing more of
   * them is recorded or published here (their holder ends them or runs them again); their slots go
   * to other runs. Returns the ids let go.
   */
  relinquish(ids: readonly string[] | "all", why: string): string[] {
    const chosen = ids === "all" ? [...this.#live.keys()] : ids.filter((id) => this.#live.has(id));
    const family = new Set(chosen.flatMap((id) => [id, ...this.#descendantsOf(id)]));
    for (const id of family) {
      const run = this.#live.get(id);
      if (!run) continue;
      this.#live.delete(id);
      this.#dequeue(id);
      if (run.control) {
        this.#inFlight.add(run.record.agent, -1);
        run.control.stop("crashed", why);
      }
    }
    if (family.size > 0) {
      this.#options.logger.warn({ runs: [...family] }, `runs stopped here without a record: ${why}`);
      this.#dispatch();
      this.#notifyIdleWhenSettled();
    }
    return [...family];
  }

  #liveRun(id: string, action: string): LiveRun {
    const live = this.#live.get(id);
    if (live) return live;
    const record = this.#newest(id);
    if (!record) throw new AgentdError("NOT_FOUND", `no run "${id}"`, { hint: "GET /runs lists the runs" });
    throw conflict(record, action, "the run has already ended");
  }

  /** Launches queued runs once the burst of new runs under way is over (once, however often asked). */
  #dispatchAfterBurst(): void {
    if (this.#burstTimer !== undefined) return;
    this.#burstTimer = setTimeout(() => {
      this.#burstTimer = undefined;
      this.#dispatch();
    }, BURST_GAP_MILLISECONDS);
  }

  /** Launches queued runs the limits allow, in a later tick (once, however often it is asked). */
  #dispatchSoon(): void {
    if (this.#dispatchScheduled) return;
    this.#dispatchScheduled = true;
    setImmediate(() => {
      this.#dispatchScheduled = false;
      this.#dispatch();
    });
  }

  /**
   * Launches queued runs the limits allow, oldest first. Launching writes a record and starts a
   * worker: past LAUNCHES_PER_TICK runs or DISPATCH_SLICE_MILLISECONDS the rest waits for the next
   * tick, so 100 runs starting at once do not hold the event loop (and every API request) for the
   * time of all of them. While a run is being recorded or a burst of new runs goes on, launches
   * wait (LAUNCH_HOLD_MILLISECONDS at most): a burst of requests is answered before its runs start.
   */
  #dispatch(): void {
    if (!this.#accepting) return;
    const now = performance.now();
    const inBurst = this.#burstRuns >= BURST_RUNS && now - this.#lastCreated < BURST_GAP_MILLISECONDS;
    if (this.#creating > 0 || inBurst) {
      this.#heldSince ??= now;
      if (now - this.#heldSince < LAUNCH_HOLD_MILLISECONDS) {
        this.#dispatchAfterBurst();
        return;
      }
    } else {
      this.#heldSince = undefined;
    }
    const sliceEnd = performance.now() + DISPATCH_SLICE_MILLISECONDS;
    let launched = 0;
    for (const id of [...this.#queue]) {
      const run = this.#live.get(id);
      if (!run) continue;
      // A sub-agent runs under its waiting parent's slot of the daemon-wide limit.
      if (!run.parentControl && this.#inFlight.total >= this.#options.concurrency) continue;
      const agentLimit = run.definition.limits.max_concurrent_runs;
      if (this.#inFlight.of(run.record.agent) >= agentLimit) continue;
      if (launched >= LAUNCHES_PER_TICK || performance.now() > sliceEnd) {
        this.#dispatchSoon();
        return;
      }
      this.#dequeue(id);
      this.#launch(run);
      launched += 1;
    }
    this.#claim();
  }

  #dequeue(id: string): void {
    const index = this.#queue.indexOf(id);
    if (index >= 0) this.#queue.splice(index, 1);
  }

  #launch(run: LiveRun): void {
    const { definition } = run;
    const control = new RunControl({
      parent: run.parentControl?.signal ?? this.#options.shutdownSignal,
      timeoutMilliseconds: definition.limits.timeout,
    });
    run.control = control;
    this.#inFlight.add(run.record.agent, 1);
    // The run's log is created while `running` is written: the worker's events go straight to it.
    const logOpened = this.#options.runLogs?.open(run.record.id);
    this.#transition(
      run,
      {
        status: "running",
        started_at: this.#now().toISOString(),
        ...(this.#options.node === undefined ? {} : { node: this.#options.node }),
      },
      undefined,
      logOpened,
    );
    const context: RunContext = {
      runId: run.record.id,
      definition,
      task: run.record.task,
      control,
      // The run's own events keep their place behind a status change still being written.
      // A run let go (relinquish) publishes nothing more here.
      events: {
        publish: (draft) => {
          if (!this.#live.has(run.record.id)) return;
          this.#publications.publish(run.record.id, () => this.#options.events.publish(draft));
        },
      },
      setStatus: (status) => {
        this.#onWorkerStatus(run, status);
        return this.#publications.published(run.record.id);
      },
      recordSpending: (usage, costUsd) => this.#recordSpending(run, usage, costUsd),
      ...(this.#options.checkpoints
        ? { checkpoints: this.#options.checkpoints.forRun(run.record.id, run.resumeFrom) }
        : {}),
    };
    // Loud before anything runs: the first event after `running` says the fence is off.
    const unsandboxed = unsandboxedRunWarning(definition);
    if (unsandboxed) {
      context.events.publish({
        agent: run.record.agent,
        run: run.record.id,
        type: "warning",
        data: unsandboxed,
      });
    }
    // The worker starts once `running` is on disk (a crash before that finds the run queued, and
    // nothing of it has run yet), a few per tick however many records land together.
    void this.#publications.published(run.record.id).then(() =>
      this.#workerStarts.add(() =>
        executeRun(this.#options.workerFor(definition), context, this.#options.logger)
          .then((outcome) => this.#finish(run, outcome))
          .catch((error: unknown) =>
            this.#options.logger.error(
              { err: error, run: run.record.id },
              "could not record the end of a run",
            ),
          ),
      ),
    );
  }

  #onWorkerStatus(run: LiveRun, status: "running" | "waiting"): void {
    run.workerStatus = status;
    // Waiting for an approval is bounded by the approval's own timeout, not the run's.
    if (status === "waiting") run.control?.holdClock("waiting");
    else run.control?.releaseClock("waiting");
    if (!this.#live.has(run.record.id) || run.record.status === "paused" || run.record.status === status)
      return;
    this.#transition(run, { status });
  }

  /** Keeps the usage and cost in the record as they accrue: a crash later does not lose them. */
  #recordSpending(run: LiveRun, usage: Usage, costUsd: number): void {
    if (!this.#live.has(run.record.id)) return;
    const record = this.#redact({
      ...run.record,
      usage: addUsage(run.record.usage, usage),
      cost_usd: run.record.cost_usd + costUsd,
    });
    run.record = record;
    Promise.resolve(this.#options.store.save(record)).catch((error: unknown) =>
      this.#options.logger.error({ err: error, run: record.id }, "could not write a run's spending"),
    );
  }

  #finish(run: LiveRun, outcome: RunOutcome): void {
    if (!this.#live.has(run.record.id)) return;
    const patch = recordPatchOf(outcome);
    // A worker that threw reports nothing spent: what the record accrued call by call stays.
    if (run.record.usage.total_tokens > outcome.usage.total_tokens) {
      patch.usage = run.record.usage;
      patch.cost_usd = Math.max(run.record.cost_usd, outcome.cost_usd);
    }
    this.#end(run, patch, outcome.error?.message);
  }

  #end(run: LiveRun, patch: Partial<RunRecord>, message?: string): RunRecord {
    run.control?.dispose();
    if (run.control && this.#live.has(run.record.id)) this.#inFlight.add(run.record.agent, -1);
    this.#live.delete(run.record.id);
    const record = this.#transition(run, { ...patch, ended_at: this.#now().toISOString() }, message);
    // A parent waiting for its sub-agent goes on once the child's end is on disk and told.
    const { onEnd } = run;
    if (onEnd) void this.#publications.published(record.id).then(() => onEnd(record));
    if (!isResumable(record)) this.#options.checkpoints?.remove(record.id);
    this.#dispatch();
    this.#notifyIdleWhenSettled();
    return record;
  }

  /**
   * Writes the new record to disk, then publishes the `status` event: never the other way round.
   * The event also waits for `alsoBefore` (the run's log being created) when given.
   */
  #transition(
    run: LiveRun,
    patch: Partial<RunRecord>,
    message?: string,
    alsoBefore?: Promise<void>,
  ): RunRecord {
    const record = this.#redact({ ...run.record, ...patch });
    run.record = record;
    void this.#publishAfterWrite(record, message, {}, alsoBefore);
    return record;
  }

  /** Saves the record and publishes its `status` event once it is on disk, in the run's order. */
  #publishAfterWrite(
    record: RunRecord,
    message?: string,
    extra: { resumed_from_round?: number } = {},
    alsoBefore?: Promise<void>,
  ): Promise<void> {
    this.#unwritten.set(record.id, record);
    const saved = this.#options.store.save(record);
    const written = alsoBefore ? Promise.all([saved, alsoBefore]).then(() => undefined) : saved;
    return this.#publications.afterWrite(record.id, written, () => {
      if (this.#unwritten.get(record.id) === record) this.#unwritten.delete(record.id);
      this.#publishStatus(record, message, extra);
    });
  }

  /** A run's newest record, written or still being written, for decisions here (not to serve). */
  #newest(id: string): RunRecord | undefined {
    return this.#live.get(id)?.record ?? this.#unwritten.get(id) ?? this.#options.store.get(id);
  }

  #publishStatus(record: RunRecord, message?: string, extra: { resumed_from_round?: number } = {}): void {
    this.#options.events.publish({
      agent: record.agent,
      run: record.id,
      type: "status",
      data: {
        status: record.status,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        ...(message === undefined ? {} : { message }),
        ...(record.parent_run === undefined ? {} : { parent_run: record.parent_run }),
        ...(isTerminal(record.status) ? { usage: record.usage, cost_usd: record.cost_usd } : {}),
        ...extra,
      },
    });
  }
}

/** A run's record could not be written: nothing was started, and the caller is told why. */
function storeFailure(record: RunRecord, error: unknown): AgentdError {
  if (error instanceof AgentdError) return error;
  return new AgentdError("STORE_WRITE_FAILED", `could not record the new run of ${record.agent}`, {
    hint: "check that data_dir is writable and the disk is not full",
    cause: error,
  });
}

/** A run cut off by a crash or a shutdown, which a checkpoint can continue. */
function isResumable(record: RunRecord): boolean {
  return (
    (record.status === "failed" && record.reason === "crashed") ||
    (record.status === "stopped" && record.reason === "daemon_shutdown")
  );
}

/** A sub-agent's definition with its limits cut to what its parent has left. */
function childDefinition(
  definition: AgentDefinition,
  left: { tokens: number; costUsd: number; milliseconds: number },
): AgentDefinition {
  const { limits } = definition;
  return {
    ...definition,
    limits: {
      ...limits,
      max_tokens: Math.max(1, Math.min(limits.max_tokens, Math.floor(left.tokens))),
      max_cost_usd: Math.max(0, Math.min(limits.max_cost_usd, left.costUsd)),
      timeout: Math.max(1, Math.min(limits.timeout, left.milliseconds)),
    },
  };
}

function conflict(record: RunRecord, action: string, why: string): AgentdError {
  return new AgentdError("CONFLICT", `cannot ${action} run ${record.id}: it is ${record.status}`, {
    hint: why,
    details: { status: record.status },
  });
}

/** What the `status` event of a run resumed from its checkpoint says. */
function resumedMessage(checkpoint: Checkpoint): string {
  return `resumed from its checkpoint after round ${checkpoint.round}`;
}
