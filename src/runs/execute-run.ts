import type { Logger } from "../logging/logger.js";
import type { RunContext, Worker } from "../workers/worker.js";
import type { RunOutcome } from "../run-vocabulary/run-outcome.js";
import { outcomeOfThrow, settleOutcome } from "../run-vocabulary/run-outcome.js";

/**
 * Runs a worker and always comes back with a settled outcome: a worker that throws (or throws
 * synchronously) fails the run instead of escaping, and an aborted run carries the abort's reason.
 */
export async function executeRun(worker: Worker, context: RunContext, logger: Logger): Promise<RunOutcome> {
  const { signal } = context.control;
  // Stopped (or timed out) before its worker started: it ends with that reason, nothing run.
  if (signal.aborted) return outcomeOfThrow(signal.reason, signal, workerName(context));
  try {
    return settleOutcome(await worker.run(context), signal);
  } catch (error) {
    if (!signal.aborted)
      logger.error({ err: error, run: context.runId }, "the worker threw instead of returning an outcome");
    return outcomeOfThrow(error, signal, workerName(context));
  }
}

function workerName(context: RunContext): string {
  const { frontmatter } = context.definition;
  return frontmatter.worker === "cli" ? `cli:${frontmatter.cli?.tool ?? "unknown"}` : "llm";
}
