import type { ChildRunRequest, ChildRuns } from "./children/child-runs.js";
import { runChild } from "./children/run-child.js";
import { LaunchPacing } from "./launch/launch-pacing.js";
import { RunLauncher } from "./launch/launch-run.js";
import { launchWaiting } from "./launch/launch-waiting.js";
import { LaunchWave } from "./launch/launch-wave.js";
import type { RunFilter } from "./run-filter.js";
import { DEFAULT_RUN_LIST_LIMIT } from "./run-records.js";
import { type LiveRun, LiveRuns } from "./live-runs.js";
import { pauseRun, reported, resumeRun } from "./pause/pause-resume.js";
import { IdempotentStarts, type StartedRun } from "./queue/idempotent-starts.js";
import { localRunQueue } from "./queue/local-run-queue.js";
import type { RunQueue } from "./queue/run-queue.js";
import { endRun } from "./record/end-run.js";
import { queueNewRun, refuseWhenShuttingDown } from "./queue/queue-new-run.js";
import { RunRecorder } from "./record/run-recorder.js";
import { recoverInterruptedRuns, spendingAfterCrash } from "./resume/recover-runs.js";
import { requeueAfterRestart } from "./resume/requeue-after-restart.js";
import { isResumable, resumeInterruptedRuns } from "./resume/resume-interrupted.js";
import { relinquishRuns } from "./takeover/relinquish-runs.js";
import { IdleRuns } from "./idle-runs.js";
import { liveRunFor } from "./run-conflict.js";
import { createRunIdSource } from "./run-id.js";
import type { RunLife } from "./run-life.js";
import type { RunManagerOptions } from "./run-manager-options.js";
import type { RunRecord, RunTrigger } from "../run-vocabulary/run-record.js";
import type { RunReason } from "../run-vocabulary/run-status.js";

export type { RunManagerOptions } from "./run-manager-options.js";
export type { RunFilter } from "./run-filter.js";

/**
 * A run's life on this node, top to bottom: recovered at construction (resume/), queued (queue/:
 * this process, or the cluster's queue), launched within the limits at a pace (launch/), paused
 * and resumed (pause/), running sub-agents (children/), stopped, ended, let go when another node
 * takes it over (takeover/). Every change is written before it is told (record/).
 */
export class RunManager implements ChildRuns {
  readonly #options: RunManagerOptions;
  readonly #live = new LiveRuns();
  readonly #recorder: RunRecorder;
  readonly #idle: IdleRuns;
  readonly #pacing = new LaunchPacing(() => this.#dispatch());
  readonly #wave = new LaunchWave();
  readonly #launcher: RunLauncher;
  readonly #queue: RunQueue;
  readonly #life: RunLife;
  readonly #idempotent: IdempotentStarts;
  #accepting = true;
  /** Runs recovery marked failed/crashed at start-up. */
  readonly recovered: RunRecord[];
  /** Runs found `queued` at start-up and queued again, in their order. */
  readonly requeued: RunRecord[] = [];

  constructor(options: RunManagerOptions) {
    this.#options = options;
    const now = options.now ?? (() => new Date());
    const redact = options.redact ?? ((record: RunRecord) => record);
    const { store, events, logger, runLogs } = options;
    const live = this.#live;
    this.#recorder = new RunRecorder({ store, events, live, logger, now, redact, runLogs });
    this.#idle = new IdleRuns(live, this.#recorder.publications);
    this.#idempotent = new IdempotentStarts(store, now);
    this.#life = {
      options,
      now,
      redact,
      live,
      recorder: this.#recorder,
      pacing: this.#pacing,
      wave: this.#wave,
      createRunId: options.createRunId ?? createRunIdSource(now),
      queue: () => this.#queue,
      accepting: () => this.#accepting,
      dispatch: () => this.#dispatch(),
      launch: (run) => this.#launcher.launch(run),
      end: (run, patch, message) => endRun(this.#life, run, patch, message),
      notifyIdleWhenSettled: () => this.#idle.notifyWhenSettled(),
      resume: (id) => this.resume(id),
    };
    this.#launcher = new RunLauncher(this.#life);
    const recovered =
      options.recover === false
        ? { crashed: [], queued: [] }
        : recoverInterruptedRuns(store, (record, message) => this.markCrashed(record, message));
    this.recovered = recovered.crashed;
    if (options.requeueQueuedRuns ?? true) for (const record of recovered.queued) this.#requeue(record);
    this.#queue = (options.runQueue ?? localRunQueue)(this.#life);
    options.storage?.onChange((full) => full || this.#pacing.soon());
    this.#dispatch();
  }

  #requeue(record: RunRecord): void {
    const requeued = requeueAfterRestart(this.#life, record);
    if (requeued) this.requeued.push(requeued);
  }

  /** Queues a run of `agentId`; it starts as soon as the limits allow. */
  async start(agentId: string, task?: string, trigger: RunTrigger = { kind: "api" }): Promise<RunRecord> {
    return (await this.startOnce(agentId, task, trigger)).run;
  }

  /**
   * As `start`; with an `idempotencyKey`, the key's run when one of this agent was made with it
   * within the window (queue/idempotent-starts.ts), on any node of the cluster: `duplicate` then.
   */
  async startOnce(
    agentId: string,
    task?: string,
    trigger: RunTrigger = { kind: "api" },
    idempotencyKey?: string,
  ): Promise<StartedRun> {
    refuseWhenShuttingDown(this.#life, agentId);
    const request = { agentId, ...(task === undefined ? {} : { task }), trigger };
    if (idempotencyKey === undefined) return queueNewRun(this.#life, request);
    const create = () => queueNewRun(this.#life, { ...request, idempotencyKey });
    return this.#idempotent.start(agentId, idempotencyKey, create);
  }

  /** Runs a sub-agent for a parent in flight; resolves with the child's final record (children/). */
  runChild(request: ChildRunRequest): Promise<RunRecord> {
    return runChild(this.#life, request);
  }

  /**
   * Launches the waiting runs the limits allow, oldest first, a few per tick (launch/), unless a
   * burst of new runs holds them; with slots left, takes more from the cluster's queue.
   */
  #dispatch(): void {
    if (!this.#accepting || this.#options.storage?.full || this.#pacing.holding()) return;
    const launch = (run: LiveRun) => this.#launcher.launch(run);
    const later = () => this.#pacing.soon();
    if (launchWaiting(this.#live, this.#options.concurrency, launch, later, this.#pacing.perTick()))
      this.#queue.fill();
  }

  /**
   * Runs `job` once the runs just queued launched and, with the launches under way, sent their
   * first model request: for work none of them needs before it, such as the schedule state of the
   * fires that started them. Asked in the next turn, after the launches of the runs queued by now
   * (LaunchPacing.soon) began.
   */
  afterLaunches(job: () => void): void {
    setImmediate(() => this.#wave.afterLaunches(job));
  }

  /** Pauses a running or waiting run; resolves with the record once on disk and told (pause/). */
  async pause(id: string): Promise<RunRecord> {
    return reported(this.#life, pauseRun(this.#life, id));
  }

  /**
   * Resumes a paused run where it was, or a run cut off by a crash or a shutdown from its last
   * checkpoint; resolves with the record once on disk and told (pause/, resume/).
   */
  async resume(id: string): Promise<RunRecord> {
    return reported(this.#life, resumeRun(this.#life, id));
  }

  /** At start: resumes the runs cut off by the last crash or shutdown whose agent has `resume: true`. */
  resumeInterruptedRuns(): Promise<RunRecord[]> {
    return resumeInterruptedRuns(this.#life, (id) => this.resumeInterrupted(id));
  }

  /** Resumes a run cut off by a crash or a shutdown, through its queue (any other run: as `resume`). */
  async resumeInterrupted(id: string): Promise<RunRecord> {
    const ended = this.#recorder.newest(id);
    if (!ended || !isResumable(ended)) return this.resume(id);
    return this.#queue.resumeInterrupted(ended);
  }

  /**
   * Stops a run with reason `user_stop`. A queued run ends at once; a run in flight has its signal
   * aborted and ends when its worker returns. Resolves with the record once on disk and told.
   */
  async stop(id: string): Promise<RunRecord> {
    return reported(this.#life, this.#stop(id));
  }

  #stop(id: string): RunRecord {
    const run = liveRunFor(this.#life, id, "stop");
    if (!run.control) {
      this.#live.dequeue(id);
      return endRun(this.#life, run, { status: "stopped", reason: "user_stop" }, "stopped before it started");
    }
    run.control.stop("user_stop", "stopped by a user");
    return run.record;
  }

  /** Ends a run interrupted by a crash (at start-up, or left by a dead node) `failed`/`crashed`. */
  markCrashed(record: RunRecord, message: string): RunRecord {
    // What the record had not caught up with yet of its spending is in its checkpoint.
    const spent = spendingAfterCrash(record, this.#options.checkpoints?.load(record.id));
    return this.#recorder.markCrashed(spent, message);
  }

  /** Queues here a run that was queued on a node that died (takeover/): it had not started. */
  adoptQueued(record: RunRecord): void {
    this.#requeue(record);
    this.#dispatch();
  }

  /** Ends as stopped a run this node took out of the cluster's queue before anyone claimed it. */
  stopWithdrawn(record: RunRecord): RunRecord {
    const patch = { status: "stopped", reason: "user_stop" } as const;
    return this.#recorder.endUnstarted(record, patch, "stopped before it started");
  }

  /** Lets go of runs this node no longer holds, unrecorded (takeover/relinquish-runs.ts). */
  relinquish(ids: readonly string[] | "all", why: string): string[] {
    return relinquishRuns(this.#life, ids, why);
  }

  /** Whether this node holds the run: queued here or in flight here. */
  isHere(id: string): boolean {
    return this.#live.has(id);
  }

  /** A page of runs, newest first (from the store: files or the database, not memory alone). */
  list(filter: RunFilter = {}): Promise<RunRecord[]> {
    return this.#options.store.list({ ...filter, limit: filter.limit ?? DEFAULT_RUN_LIST_LIMIT });
  }

  get(id: string): RunRecord | undefined {
    return this.#options.store.get(id);
  }

  /** The runs not finished (queued, running, paused, waiting), of every node. */
  unfinished(): RunRecord[] {
    return this.#options.store.unfinished();
  }

  /** One run, also one no longer held in memory (an old run on PostgreSQL). */
  find(id: string): Promise<RunRecord | undefined> {
    return this.#options.store.find(id);
  }

  /** The newest run of an agent. */
  lastRun(agentId: string): RunRecord | undefined {
    return this.#options.store.lastOf(agentId);
  }

  /** Runs of an agent not finished yet (queued, running, paused or waiting). */
  unfinishedRuns(agentId: string): number {
    return this.#queue.unfinishedOf(agentId);
  }

  /** Runs of an agent waiting for a slot (not started yet). */
  queuedRuns(agentId: string): number {
    return this.#queue.queuedOf(agentId);
  }

  queueDepth(): number {
    return this.#queue.depth();
  }

  /** Shutdown, first step: new runs are refused with SHUTTING_DOWN and queued runs are stopped. */
  stopAccepting(): void {
    this.#accepting = false;
    this.#queue.close();
    for (const id of [...this.#live.waiting]) {
      const run = this.#live.get(id);
      this.#live.dequeue(id);
      const why = "the daemon shut down before the run started";
      if (run) endRun(this.#life, run, { status: "stopped", reason: "daemon_shutdown" }, why);
    }
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /** Resolves true once no run is in flight and every status change went out; false past the timeout. */
  waitUntilIdle(timeoutMilliseconds: number): Promise<boolean> {
    return this.#idle.wait(timeoutMilliseconds);
  }

  /** Resolves once every status change so far is on disk and published (before the logs close). */
  published(): Promise<void> {
    this.#wave.flush();
    return this.#recorder.publications.settled();
  }

  /** Last resort of shutdown: records runs whose workers ignored their aborted signal as stopped. */
  abandonUnfinished(reason: RunReason): void {
    for (const run of [...this.#live.values()]) {
      run.control?.stop(reason);
      endRun(this.#life, run, { status: "stopped", reason }, "the worker did not stop in time");
    }
  }
}
