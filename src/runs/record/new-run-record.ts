import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { AgentdError } from "../../errors/agentd-error.js";
import type { RunLife } from "../run-life.js";
import type { RunRecord, RunTrigger } from "../../run-vocabulary/run-record.js";
import { EMPTY_USAGE } from "../../run-vocabulary/run-status.js";

/** What a new run is made of: who runs what, why, and under which definition. */
export interface NewRun {
  id: string;
  agent: string;
  task: string;
  trigger: RunTrigger;
  definition: AgentDefinition;
  createdAt: Date;
  /** A sub-agent's run: the run that started it. */
  parentRun?: string;
  /** The `Idempotency-Key` it was posted with. */
  idempotencyKey?: string;
  /** A sub-agent's: the signal of the tool call that starts it (its trace span is the run's parent). */
  callSignal?: AbortSignal;
}

/** The first record of a run: `queued`, nothing spent (not yet masked: the caller redacts it). */
export function newRunRecord(run: NewRun): RunRecord {
  return {
    id: run.id,
    agent: run.agent,
    task: run.task,
    status: "queued",
    trigger: run.trigger,
    ...(run.parentRun === undefined ? {} : { parent_run: run.parentRun }),
    definition_hash: run.definition.hash,
    created_at: run.createdAt.toISOString(),
    usage: EMPTY_USAGE,
    cost_usd: 0,
    ...(run.idempotencyKey === undefined ? {} : { idempotency_key: run.idempotencyKey }),
  };
}

/**
 * A new run's first record, with this node's id source and clock, masked. The fields the daemon
 * makes itself (its id, status, parent run, hash, time, spending and its span's id) skip the
 * redactor: they hold no secret, masking a piece of one would only damage it, and skipping them
 * halves a run request's redaction. Every other field (the agent, the task, the trigger, the
 * idempotency key, the trace id, which a caller's `traceparent` names, and any field added later)
 * is masked, as every later record of the run is.
 */
export function queuedRecord(life: RunLife, run: Omit<NewRun, "id" | "createdAt">): RunRecord {
  const record = newRunRecord({ ...run, id: life.createRunId(), createdAt: life.now() });
  const traced = life.options.traceNewRun?.(record, run.callSignal) ?? record;
  // Named to be left out (the `_` names are unused on purpose): the rest is what gets masked.
  const {
    id: _id,
    status: _status,
    parent_run: _parent_run,
    definition_hash: _definition_hash,
    created_at: _created_at,
    usage: _usage,
    cost_usd: _cost_usd,
    span_id: _span_id,
    trace_sampled: _trace_sampled,
    ...outside
  } = traced;
  // The redactor maps every string of any JSON-like value (RunLife types it for whole records).
  return { ...traced, ...life.redact(outside as RunRecord) };
}

/** A run's record could not be written: nothing was started, and the caller is told why. */
export function storeFailure(record: RunRecord, error: unknown): AgentdError {
  if (error instanceof AgentdError) return error;
  return new AgentdError("STORE_WRITE_FAILED", `could not record the new run of ${record.agent}`, {
    hint: "check that data_dir is writable and the disk is not full",
    cause: error,
  });
}
