import type { Logger } from "../logging/logger.js";
import { RunAbort } from "../run-vocabulary/run-control.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Scheduler } from "../scheduler/scheduler.js";

export interface DrainOptions {
  runs: RunManager;
  scheduler: Scheduler;
  /** The root of every run's signal. */
  shutdownController: AbortController;
  /** How long running runs may take to finish (config `shutdown.grace`). */
  graceMilliseconds: number;
  /** How long workers get to return once their signal is aborted. */
  stopWaitMilliseconds: number;
  logger: Logger;
}

/**
 * SPEC 8 shutdown, the run half: stop taking work (new runs get SHUTTING_DOWN, queued runs are
 * stopped, the scheduler stops), let running runs finish within the grace period, then abort the
 * root signal with reason `daemon_shutdown` and wait for the workers to return. A worker that
 * ignores its signal has its run recorded as stopped anyway.
 */
export async function drainRuns(options: DrainOptions): Promise<void> {
  const { runs, scheduler, shutdownController, logger } = options;
  runs.stopAccepting();
  scheduler.stop();
  logger.info({ grace_ms: options.graceMilliseconds }, "shutting down: waiting for running runs to finish");
  if (await runs.waitUntilIdle(options.graceMilliseconds)) return;
  logger.warn("grace period over: stopping the runs still going with reason daemon_shutdown");
  shutdownController.abort(new RunAbort("daemon_shutdown", "the daemon is shutting down"));
  if (await runs.waitUntilIdle(options.stopWaitMilliseconds)) return;
  logger.error("some workers did not stop in time; recording their runs as stopped");
  runs.abandonUnfinished("daemon_shutdown");
}
