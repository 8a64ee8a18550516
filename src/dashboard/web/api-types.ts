// What the page reads from the public HTTP API (snake_case, as on the wire).

export type RunStatus = "queued" | "running" | "paused" | "waiting" | "completed" | "failed" | "stopped";

export const FINISHED_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "stopped"]);

export interface ErrorDetail {
  code?: string;
  message?: string;
  file?: string;
  line?: number;
  field?: string;
  hint?: string;
}

export interface LastRun {
  id: string;
  status: RunStatus;
  reason: string | null;
  created_at?: string;
  started_at?: string | null;
  ended_at: string | null;
  cost_usd?: number;
}

export interface AgentSummary {
  id: string;
  name: string;
  description: string;
  valid: boolean;
  errors: string[];
  error_details?: ErrorDetail[];
  warnings: string[];
  worker: string;
  schedule: { cron: string; timezone: string | null } | null;
  next_fire: string | null;
  enabled: boolean;
  /** Its sandbox is off or shares the host's network (absent from an older daemon). */
  unsandboxed?: boolean;
  last_run: LastRun | null;
}

/** What an agent's sandboxed commands see: `GET /agents/:id`'s `sandbox_view`. */
export interface SandboxView {
  writable: string[];
  read_only: string[];
  hidden: string[];
  private: string[];
  network: "none" | "all" | string[];
}

export interface AgentDetail extends AgentSummary {
  file: string;
  /** Null with `mode: off` or without a valid definition; absent from an older daemon. */
  sandbox_view?: SandboxView | null;
  definition: (Record<string, unknown> & { system_prompt: string; hash: string }) | null;
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

export interface RunRecord {
  id: string;
  agent: string;
  task: string;
  status: RunStatus;
  reason?: string;
  trigger: { kind: string; scheduled_for?: string };
  definition_hash: string;
  worker?: string;
  parent_run?: string;
  created_at: string;
  started_at?: string;
  ended_at?: string;
  usage: Usage;
  cost_usd: number;
  result?: string;
  error?: { code: string; message: string };
}

export interface AgentEvent {
  id: number;
  agent: string;
  run: string | null;
  type: string;
  time: string;
  data: Record<string, unknown>;
}

export interface PendingApproval {
  id: string;
  agent: string;
  run: string;
  tool: string;
  arguments?: unknown;
  requested_at?: string;
  expires_at?: string;
  reason?: string;
  on_timeout?: "deny" | "approve";
}

export interface PendingQuestion {
  id: string;
  agent: string;
  run: string;
  question: string;
  choices?: string[];
  asked_at?: string;
  expires_at?: string;
}

export interface MergedPage {
  events: AgentEvent[];
  next: string;
  missed: number;
}
