import { outcomeOfThrow, settleOutcome } from "../run-vocabulary/run-outcome.js";
import type { RunContext, Worker } from "../workers/worker.js";
import type { RunOutcome } from "../run-vocabulary/run-outcome.js";
import type { HookRunner } from "./hook-runner.js";

/**
 * A worker whose runs end with the agent's `on_run_end` hooks, given how the run ended, before the
 * run manager records the end: the hooks' `hook` events come before the final `status` event. A
 * worker that throws is reported to the hooks as the failure it becomes.
 */
export function withRunEndHooks(worker: Worker, hooks: HookRunner): Worker {
  return {
    run: async (context: RunContext): Promise<RunOutcome> => {
      if (!context.definition.hooks.some((hook) => hook.point === "on_run_end")) return worker.run(context);
      const { signal } = context.control;
      const scope = {
        runId: context.runId,
        definition: context.definition,
        events: context.events,
        runSignal: signal,
      };
      let outcome: RunOutcome;
      try {
        outcome = await worker.run(context);
      } catch (error) {
        await hooks.runEnded(outcomeOfThrow(error, signal, "unknown"), scope);
        throw error;
      }
      // The status the run will be recorded with: a stopped run says so, whatever the worker said.
      await hooks.runEnded(settleOutcome(outcome, signal), scope);
      return outcome;
    },
  };
}
