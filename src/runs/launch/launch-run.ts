import type { RunOutcome } from "../../run-vocabulary/run-outcome.js";
import type { RunContext } from "../../workers/worker.js";
import { unsandboxedRunWarning } from "../../sandbox/unsandboxed-warnings.js";
import { PacedJobs } from "../../util/paced-jobs.js";
import { executeRun } from "../execute-run.js";
import type { LiveRun } from "../live-runs.js";
import { RunControl } from "../../run-vocabulary/run-control.js";
import { recordPatchOf } from "../../run-vocabulary/run-outcome.js";
import type { RunLife } from "../run-life.js";
import { type Usage, addUsage, isTerminal } from "../../run-vocabulary/run-status.js";
import { SpendingWrites } from "./spending-writes.js";
import { spendingAfterCrash } from "../resume/recover-runs.js";
import { systemClock } from "../../clock/clock.js";

/**
 * Starts runs given a slot: each gets its RunControl (stop, pause, timeout, shutdown), its
 * `running` record, its event log, and then its worker, a few per tick; the worker's outcome ends
 * the run. While it runs, the worker's status and spending land in its record (the spending at
 * most once a second between status changes: SpendingWrites).
 */
export class RunLauncher {
  readonly #life: RunLife;
  readonly #workerStarts: PacedJobs;
  readonly #spendingWrites: SpendingWrites;

  constructor(life: RunLife) {
    this.#life = life;
    this.#workerStarts = new PacedJobs(() => life.pacing.perTick());
    const { options } = life;
    this.#spendingWrites = new SpendingWrites({
      clock: options.clock ?? systemClock,
      holds: (run) => life.live.get(run.record.id) === run && !isTerminal(run.record.status),
      save: (run) => this.#saveSpending(run),
    });
  }

  launch(run: LiveRun): void {
    const life = this.#life;
    const { options, recorder } = life;
    const { definition } = run;
    // Under way until the turn after its worker starts: what can wait, waits for that (LaunchWave).
    const endLaunch = life.wave.begin();
    let requestOut = (): void => undefined;
    const firstRequestOut = new Promise<void>((resolve) => {
      requestOut = resolve;
    });
    const launched = (): void => {
      endLaunch();
      requestOut();
    };
    const control = new RunControl({
      parent: run.parentControl?.signal ?? options.shutdownSignal,
      timeoutMilliseconds: definition.limits.timeout,
      clock: options.clock,
    });
    run.control = control;
    life.live.inFlight.add(run.record.agent, 1);
    // A resumed run's record goes on from the larger spending: its own, or its checkpoint's (a run
    // taken over from a dead node has a record that may not have caught up with it).
    if (run.resumeFrom) run.record = spendingAfterCrash(run.record, run.resumeFrom);
    // The run's log is there before `running` is published (a spare renamed into place, else
    // created off the event loop): the worker's events go straight to it. Not deferred to the
    // launch wave: a kill -9 right after the launch would find no run log.
    const logOpened = options.runLogs?.open(run.record.id);
    // `running` is on disk once it is a line of the open-runs journal. The record file (what a start
    // with the journal damaged rebuilds from) follows once the worker's first request is out, a few
    // milliseconds later, and before any later save of the run: issued at once, the record files of
    // 20 launches (four trips through libuv's threads each) took the cores from the event loop while
    // it launched the rest.
    const waits = { issueAfter: firstRequestOut, ...(logOpened ? { publishAfter: logOpened } : {}) };
    recorder.transition(
      run,
      {
        status: "running",
        started_at: life.now().toISOString(),
        ...(options.node === undefined ? {} : { node: options.node }),
      },
      undefined,
      waits,
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
          if (!life.live.has(run.record.id)) return;
          recorder.publications.publish(run.record.id, () => options.events.publish(draft));
        },
      },
      setStatus: (status) => {
        this.#onWorkerStatus(run, status);
        return recorder.publications.published(run.record.id);
      },
      recordSpending: (usage, costUsd) => this.#recordSpending(run, usage, costUsd),
      afterLaunches: (job) => life.wave.afterLaunches(job),
      ...(options.checkpoints
        ? { checkpoints: options.checkpoints.forRun(run.record.id, run.resumeFrom) }
        : {}),
      ...(options.runHistory === undefined
        ? {}
        : { history: () => options.runHistory?.(run.record.id, run.record.agent) ?? Promise.resolve([]) }),
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
    // A run that answered while others still launch ends once their first requests are out.
    void recorder.publications.published(run.record.id).then(() =>
      this.#workerStarts.add(() => {
        executeRun(options.workerFor(definition), context, options.logger)
          .then((outcome) => life.wave.afterLaunches(() => this.#finish(run, outcome, launched)))
          .catch((error: unknown) =>
            options.logger.error({ err: error, run: run.record.id }, "could not record the end of a run"),
          );
        // By the next turn the worker has sent its first model request (nothing before it waits
        // for I/O but the tool listing of MCP servers, which the wave does not wait for then).
        setImmediate(launched);
      }),
    );
  }

  #finish(run: LiveRun, outcome: RunOutcome, launched: () => void): void {
    launched();
    this.#spendingWrites.forget(run);
    if (!this.#life.live.has(run.record.id)) return;
    const patch = recordPatchOf(outcome);
    // A worker that threw reports nothing spent: what the record accrued call by call stays.
    if (run.record.usage.total_tokens > outcome.usage.total_tokens) {
      patch.usage = run.record.usage;
      patch.cost_usd = Math.max(run.record.cost_usd, outcome.cost_usd);
    }
    this.#life.end(run, patch, outcome.error?.message);
  }

  #onWorkerStatus(run: LiveRun, status: "running" | "waiting"): void {
    run.workerStatus = status;
    // Waiting for an approval is bounded by the approval's own timeout, not the run's.
    if (status === "waiting") run.control?.holdClock("waiting");
    else run.control?.releaseClock("waiting");
    if (!this.#life.live.has(run.record.id) || run.record.status === "paused" || run.record.status === status)
      return;
    this.#life.recorder.transition(run, { status });
  }

  /**
   * Keeps the usage and cost in the record as they accrue: at once in memory (every status change
   * writes them), on disk within SPENDING_WRITE_INTERVAL_MILLISECONDS. Numbers only: nothing in
   * them is a secret to mask.
   */
  #recordSpending(run: LiveRun, usage: Usage, costUsd: number): void {
    if (!this.#life.live.has(run.record.id)) return;
    run.record = {
      ...run.record,
      usage: addUsage(run.record.usage, usage),
      cost_usd: run.record.cost_usd + costUsd,
    };
    this.#spendingWrites.changed(run);
  }

  #saveSpending(run: LiveRun): void {
    const { options, redact } = this.#life;
    // Masked again as every record write is: the redactor may have learnt a value since.
    const record = redact(run.record);
    run.record = record;
    Promise.resolve(options.store.save(record)).catch((error: unknown) =>
      options.logger.error({ err: error, run: record.id }, "could not write a run's spending"),
    );
  }
}
