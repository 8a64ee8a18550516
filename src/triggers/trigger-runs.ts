import type { RunRecord, RunTrigger } from "../run-vocabulary/run-record.js";

/** What triggers need of the run manager: starting runs once per key, and reading runs back. */
export interface TriggerRuns {
  /** Queues a run (once per agent and key within 24 h when a key is given). */
  startOnce(
    agentId: string,
    task: string,
    trigger: RunTrigger,
    idempotencyKey?: string,
  ): Promise<{ run: RunRecord; duplicate: boolean }>;
  /** The run an earlier start with this key made, within the Idempotency-Key window. */
  recorded(agentId: string, key: string): RunRecord | undefined;
  /** `recorded` asked of the store: also a run another node of a cluster made and this one missed. */
  stored(agentId: string, key: string): Promise<RunRecord | undefined>;
  get(runId: string): RunRecord | undefined;
  find(runId: string): Promise<RunRecord | undefined>;
}
