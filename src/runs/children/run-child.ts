import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { AgentdError } from "../../errors/agentd-error.js";
import { runReasonOf } from "../../run-vocabulary/abort-ending.js";
import type { LiveRun } from "../live-runs.js";
import { queuedRecord, storeFailure } from "../record/new-run-record.js";
import type { RunLife } from "../run-life.js";
import { statusForReason } from "../../run-vocabulary/run-outcome.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { runnableDefinition } from "../runnable-definition.js";
import type { ChildRunRequest } from "./child-runs.js";

/**
 * Runs a sub-agent for a parent in flight and resolves with the child's final record. The child
 * inherits what is left of the parent's token and cost budgets and of its time, is stopped with
 * it, and takes no slot of the daemon-wide `concurrency` (its parent holds one and waits for it:
 * queueing it behind that limit could deadlock); its own agent's `max_concurrent_runs` applies.
 */
export async function runChild(life: RunLife, request: ChildRunRequest): Promise<RunRecord> {
  const parent = life.live.get(request.parentRun);
  if (!parent?.control) {
    throw new AgentdError("CONFLICT", `run ${request.parentRun} is not in flight`, {
      hint: "a sub-agent can only be started by a running run",
    });
  }
  if (!life.accepting()) {
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
  const definition = childDefinition(runnableDefinition(life.options.agents, request.agent), {
    tokens: request.budget.tokens,
    costUsd: request.budget.costUsd,
    milliseconds: parentControl.remainingMilliseconds(),
  });
  // Its first record goes to the append-only journal: masked with every value the vault holds now
  // (a secret set while the parent ran), as a run queued through the API is (queueNewRun).
  await life.options.secretsCurrent?.();
  const record = queuedRecord(life, {
    agent: request.agent,
    task: request.task,
    trigger: { kind: "agent", parent_run: request.parentRun },
    parentRun: request.parentRun,
    definition,
    ...(request.callSignal === undefined ? {} : { callSignal: request.callSignal }),
  });
  await life.recorder.create(record).catch((error: unknown) => {
    throw storeFailure(record, error);
  });
  life.recorder.publishStatus(record);
  life.options.onRunCreated?.(record);
  return new Promise<RunRecord>((resolve) => {
    const child: LiveRun = {
      record,
      definition,
      workerStatus: "running",
      depth,
      parentControl,
      onEnd: resolve,
    };
    life.live.set(child);
    // A child still queued when its parent stops never starts.
    const stopQueued = () => {
      if (child.control || !life.live.has(record.id)) return;
      life.live.dequeue(record.id);
      const reason = runReasonOf(parentControl.signal) ?? "user_stop";
      life.end(child, { status: statusForReason(reason), reason }, "its parent run ended first");
    };
    life.live.enqueue(record.id);
    // The parent may have stopped while the record was written.
    if (parentControl.signal.aborted) stopQueued();
    else parentControl.signal.addEventListener("abort", stopQueued, { once: true });
    life.dispatch();
  });
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
