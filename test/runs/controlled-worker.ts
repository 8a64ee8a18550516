import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { EMPTY_USAGE } from "../../src/run-vocabulary/run-status.js";
import type { RunContext, Worker } from "../../src/workers/worker.js";
import type { RunOutcome } from "../../src/run-vocabulary/run-outcome.js";

interface PendingRun {
  context: RunContext;
  finish: (outcome: Partial<RunOutcome>) => void;
}

/**
 * A small real Worker whose runs last until the test finishes them (or their signal is aborted).
 * Each run publishes a `thought` with its task, so tests can see it started.
 */
export class ControlledWorker implements Worker {
  readonly started: RunContext[] = [];
  readonly #pending = new Map<string, PendingRun>();
  readonly #startListeners = new Set<() => void>();

  run(context: RunContext): Promise<RunOutcome> {
    this.started.push(context);
    context.events.publish({
      agent: context.definition.id,
      run: context.runId,
      type: "thought",
      data: { text: `working on ${context.task}` },
    });
    const outcome = new Promise<RunOutcome>((resolve, reject) => {
      const finish = (partial: Partial<RunOutcome>) =>
        resolve({ status: "completed", usage: EMPTY_USAGE, cost_usd: 0, worker: "test", ...partial });
      this.#pending.set(context.runId, { context, finish });
      context.control.signal.addEventListener("abort", () => reject(context.control.signal.reason), {
        once: true,
      });
    });
    for (const listener of this.#startListeners) listener();
    return outcome;
  }

  /** Ends a run the way a worker would return. */
  finish(runId: string, outcome: Partial<RunOutcome> = {}): void {
    const pending = this.#pending.get(runId);
    if (!pending) throw new Error(`run ${runId} has not started`);
    this.#pending.delete(runId);
    pending.finish({ result: `done: ${pending.context.task}`, ...outcome });
  }

  /** Resolves once `count` runs have started in total. */
  async waitForStarted(count: number, timeoutMilliseconds = 10_000): Promise<RunContext[]> {
    if (this.started.length >= count) return this.started;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#startListeners.delete(check);
        reject(new Error(`only ${this.started.length} of ${count} runs started`));
      }, timeoutMilliseconds);
      const check = () => {
        if (this.started.length < count) return;
        clearTimeout(timer);
        this.#startListeners.delete(check);
        resolve(this.started);
      };
      this.#startListeners.add(check);
    });
  }

  /** A workerFor that always answers this worker. */
  readonly workerFor = (_definition: AgentDefinition): Worker => this;
}
