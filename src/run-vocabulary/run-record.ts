import type { RunReason, RunStatus, Usage } from "./run-status.js";

/** What started a run. */
export type RunTrigger =
  | { kind: "api" }
  | { kind: "cli" }
  | { kind: "schedule"; scheduled_for: string }
  /** A catch-up run under `on_missed: run_once`: the latest of the missed fires, and how many it stands for. */
  | { kind: "missed"; scheduled_for: string; fires?: number }
  /** A sub-agent's run, started by its parent's model through an `agent__<id>` tool. */
  | { kind: "agent"; parent_run: string }
  /** A trigger of the agent file (src/triggers/): its name, and the sender's delivery id or the upstream run. */
  | { kind: "webhook" | "after" | "watch"; name?: string; id?: string };

/**
 * SPEC 4/6: one run as stored in `data_dir` and served by `GET /runs/:run`. snake_case on the wire.
 */
export interface RunRecord {
  /** `r_` + a sortable unique id. */
  id: string;
  agent: string;
  task: string;
  status: RunStatus;
  reason?: RunReason;
  trigger: RunTrigger;
  /** The run whose model started this one (sub-agents); absent for a run started otherwise. */
  parent_run?: string;
  /** The content hash of the definition the run started with. */
  definition_hash: string;
  /** "llm", "cli:claude", "cli:claude→llm" after a fallback. */
  worker?: string;
  created_at: string;
  /** The node of the cluster that executed the run (PostgreSQL store); absent on one daemon. */
  node?: string;
  started_at?: string;
  ended_at?: string;
  usage: Usage;
  cost_usd: number;
  result?: string;
  /** `hint`: what the user should do next, when the run's failure has one. */
  error?: { code: string; message: string; hint?: string };
  /**
   * The `Idempotency-Key` the run was posted with (`POST /agents/:id/runs`): the same key of the
   * same agent within IDEMPOTENCY_WINDOW answers this run again instead of starting another.
   */
  idempotency_key?: string;
  /** The OpenTelemetry trace of the run (docs/telemetry.md), when traces are on. */
  trace_id?: string;
  /** The run's `invoke_agent` span in that trace: a run resumed later continues under it. */
  span_id?: string;
  /** False when that span was not sampled (a caller's `traceparent` said so): resumed, it stays so. */
  trace_sampled?: false;
}
