import { AgentdError } from "../../errors/agentd-error.js";
import type { RunTrigger } from "../../run-vocabulary/run-record.js";
import { queuedRecord } from "../record/new-run-record.js";
import type { RunLife } from "../run-life.js";
import { pickTask, runnableDefinition } from "../runnable-definition.js";
import type { StartedRun } from "./idempotent-starts.js";

/** What a new run is asked for: whose, what to do, what started it, and an idempotency key. */
export interface NewRunRequest {
  agentId: string;
  task?: string;
  trigger: RunTrigger;
  idempotencyKey?: string;
}

/** Throws SHUTTING_DOWN once shutdown began: no new run is taken then, not even a duplicate's answer. */
export function refuseWhenShuttingDown(life: RunLife, agentId: string): void {
  if (life.accepting()) return;
  const hint = "start the run again once the daemon is back";
  throw new AgentdError("SHUTTING_DOWN", `cannot start a run of ${agentId}: the daemon is shutting down`, {
    hint,
  });
}

/**
 * Makes a new run's queued record and puts it in the queue (this process's or the cluster's);
 * `duplicate` when the queue answered with the run an idempotency key already made.
 */
export async function queueNewRun(life: RunLife, request: NewRunRequest): Promise<StartedRun> {
  const { agentId, task, trigger, idempotencyKey } = request;
  // The first record goes to an append-only journal: masked with every value the vault holds now
  // (so is a refusal, which quotes an invalid agent file's errors).
  await life.options.secretsCurrent?.();
  const definition = runnableDefinition(life.options.agents, agentId);
  const record = queuedRecord(life, {
    agent: agentId,
    task: pickTask(task, definition),
    trigger,
    definition,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });
  const run = await life.queue().add({ record, definition, workerStatus: "running", depth: 0 });
  const duplicate = run.id !== record.id;
  if (!duplicate) life.options.onRunCreated?.(run);
  return { run, duplicate };
}
