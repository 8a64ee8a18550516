import type { EventFeed } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { isTerminal } from "../run-vocabulary/run-status.js";

/**
 * One daemon log line when a run starts and one when it ends (agent, run, status, reason,
 * duration, tokens, cost, and its trace id when traced), from the status events: an operator reads
 * what happened without polling the API. Returns the unsubscribe function.
 */
export function logRunLifecycle(
  bus: EventFeed,
  runs: { get(runId: string): RunRecord | undefined },
  logger: Logger,
): () => void {
  const started = new Set<string>();
  return bus.subscribe((event) => {
    if (event.type !== "status" || event.run === null) return;
    const { status } = event.data;
    if (status === "running" && !started.has(event.run)) {
      started.add(event.run);
      const record = runs.get(event.run);
      logger.info({ agent: event.agent, run: event.run, trigger: record?.trigger.kind }, "run started");
      return;
    }
    if (!isTerminal(status)) return;
    started.delete(event.run);
    const record = runs.get(event.run);
    const begin = record?.started_at ?? record?.created_at;
    const fields = {
      agent: event.agent,
      run: event.run,
      status,
      reason: event.data.reason,
      duration_ms: begin && record?.ended_at ? Date.parse(record.ended_at) - Date.parse(begin) : undefined,
      tokens: record?.usage.total_tokens,
      cost_usd: record?.cost_usd,
      // From the record: the run's trace has closed by now, and the logger's own field with it.
      trace_id: record?.trace_id,
    };
    if (status === "completed") logger.info(fields, "run ended");
    else logger.warn({ ...fields, error: record?.error?.message }, "run ended");
  });
}
