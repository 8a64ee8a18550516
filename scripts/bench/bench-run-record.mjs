// The queued run record the traces benches stamp a run's span with: an API run of the agent `bench`.

/** A queued run of the agent `bench`, created now. */
export function queuedBenchRecord(runId) {
  return {
    id: runId,
    agent: "bench",
    task: "bench",
    status: "queued",
    trigger: { kind: "api" },
    definition_hash: "bench",
    created_at: new Date().toISOString(),
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    cost_usd: 0,
  };
}
