import type { Actor } from "../events/actor.js";
import type { AuditDraft, AuditEntry } from "../access/audit-entry.js";
import type { Role } from "../access/role.js";
import type { TokenSummary } from "../access/api-token.js";
import type { EventFeed } from "../events/event-bus.js";
import type { SandboxView } from "../sandbox/sandbox-view.js";
import type { StoreHealth } from "../store/durable-store.js";
import type { StorageStatus } from "../store/storage-state.js";
import type { EventStore } from "../events/event-store.js";
import type { LlmTelemetry } from "../llm/llm-call-feed.js";
import type { RunReason, RunStatus } from "../run-vocabulary/run-status.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import type { RunFilter } from "../runs/run-filter.js";
import type { AnsweredQuestion, PendingQuestion } from "../questions/question-broker.js";
import type { PendingApproval } from "../approvals/approval-broker.js";
import type { StartedRun } from "../runs/queue/idempotent-starts.js";
import type { HookAnswer, HookDelivery } from "../triggers/webhook-intake.js";
import type { TriggerStatus } from "../triggers/trigger-health.js";
import type { DeliveriesView } from "../deliveries/deliveries.js";

/** Deliveries of runs' outcomes (src/deliveries/): pages of them, the targets' health, the counts. */
export type DeliveriesService = DeliveriesView;
import type { MemoryOperators } from "../memory/memory-operators.js";
import type { AgentSwitches } from "../definitions/agent-switches.js";

/** One agent in `GET /agents` (snake_case on the wire). */
export interface AgentSummary {
  id: string;
  name: string;
  description: string;
  /** false when the file fails to parse or validate; `errors` says why. */
  valid: boolean;
  errors: string[];
  /** The same errors as structured objects: code, message and, where known, file, line, field, hint. */
  error_details?: Array<Record<string, unknown>>;
  warnings: string[];
  /** "llm" or "cli:<tool>". */
  worker: string;
  schedule: { cron: string; timezone: string | null } | null;
  /** Next scheduled fire (ISO time), or null. */
  next_fire: string | null;
  enabled: boolean;
  /** An operator turned the agent off (`agentd disable`): who and when; null otherwise. */
  switched_off?: { by: string; at: string } | null;
  /**
   * true when the serving definition runs with its fence off: `sandbox: off` (config, or an agent
   * file the config allows) or `network: all`. Every run of it starts with an UNSANDBOXED warning.
   */
  unsandboxed: boolean;
  last_run: {
    id: string;
    status: RunStatus;
    reason: RunReason | null;
    created_at?: string;
    started_at?: string | null;
    ended_at: string | null;
    cost_usd?: number;
  } | null;
}

/** One hook of an agent as `GET /agents/:id` shows it. */
export interface ResolvedHookView {
  command: string;
  timeout_ms: number;
  source: "config" | "agent";
  /** The tools it runs for; absent: every tool. */
  tools?: string[];
}

/** `GET /agents/:id`: the summary plus the resolved definition (secret names only, never values). */
export interface AgentDetail extends AgentSummary {
  file: string;
  /** What its sandboxed children see (paths by access); null for `mode: off` or no valid definition. */
  sandbox_view: SandboxView | null;
  definition: {
    system_prompt: string;
    model: string;
    fallback_models: string[];
    tools: string[];
    permissions: { allow: string[]; ask: string[]; deny: string[] };
    limits: Record<string, number>;
    secrets: string[];
    preset_chain: string[];
    hash: string;
    /** `full`, `read-only` or `no-tools`: `tools` is already narrowed to it. */
    capabilities: "full" | "read-only" | "no-tools";
    sandbox_mode: "workspace-write" | "read-only" | "off";
    /** Config hooks first, then the agent's, per hook point. */
    hooks: Record<"before_tool" | "after_tool" | "on_run_end", ResolvedHookView[]>;
  } | null;
}

/** The agents the daemon knows (the registry, with the scheduler's next fire times). */
export interface AgentsService {
  /** The absolute agents folder the daemon watches (lets a client tell which project it serves). */
  readonly directory?: string;
  list(): AgentSummary[];
  get(id: string): AgentDetail | undefined;
}

/**
 * Runs (the run manager). Failures are AgentdErrors: NOT_FOUND (no such agent or run), CONFLICT
 * (invalid or disabled agent, pause of a finished run), SHUTTING_DOWN.
 */
export interface RunsService {
  start(agentId: string, task: string | undefined): Promise<RunRecord>;
  /**
   * As `start`, with the request's `Idempotency-Key`: the same key of the same agent within 24 h
   * answers the run it made (`duplicate: true`), on any node of a cluster.
   */
  startOnce(agentId: string, task: string | undefined, idempotencyKey: string): Promise<StartedRun>;
  /** A page of runs, newest first (`limit` defaults to DEFAULT_RUN_LIST_LIMIT). */
  list(filter: RunFilter): Promise<RunRecord[]>;
  get(runId: string): RunRecord | undefined;
  /** One run, also one the node no longer holds in memory (an old run, read from the store). */
  find(runId: string): Promise<RunRecord | undefined>;
  /** The runs not finished, of every node: how many in each status (metrics). */
  unfinished(): RunRecord[];
  /** The record after the action; a promise where the store writes it first (PostgreSQL). */
  /** `actor`: who asked, carried to the node the run is on when it is another. */
  pause(runId: string, options?: { actor?: Actor }): RunRecord | Promise<RunRecord>;
  resume(runId: string, options?: { actor?: Actor }): RunRecord | Promise<RunRecord>;
  stop(runId: string, options?: { actor?: Actor }): RunRecord | Promise<RunRecord>;
  /** Runs waiting for a free slot. */
  queueDepth(): number;
}

/** The approval broker: pending `ask` calls and their answers. `decide` throws APPROVAL_NOT_FOUND. */
export interface ApprovalsService {
  list(): PendingApproval[];
  /** A promise where the run is on another node: it settles once that node applied the decision. */
  decide(
    id: string,
    decision: "approve" | "deny",
    options?: { scope?: "once" | "run"; actor?: Actor },
  ): void | Promise<void>;
}

/** Questions `ask_human` is waiting on (the question broker). `answer` throws QUESTION_NOT_FOUND. */
export interface QuestionsService {
  list(): PendingQuestion[];
  /** A promise where the run is on another node: it settles once that node applied the answer. */
  answer(
    id: string,
    answer: string,
    options?: { by?: string; actor?: Actor },
  ): AnsweredQuestion | Promise<AnsweredQuestion>;
}

/** Named tokens (the daemon's TokenRegistry): created, listed and revoked by an admin. */
export interface TokensService {
  list(): TokenSummary[];
  create(name: string, role: Role, createdBy: string): Promise<TokenSummary & { token: string }>;
  /** Throws NOT_FOUND for a name that is no token. */
  revoke(name: string): Promise<void>;
}

/** The audit trail: who did what. */
export interface AuditService {
  /** Never throws: a log that cannot be written is reported in the daemon log. */
  record(draft: AuditDraft): Promise<AuditEntry | undefined>;
  page(after: string | undefined, limit: number): Promise<AuditEntry[]>;
}

/** Everything the HTTP API serves, implemented by the composition root. */
export interface ApiServices {
  agents: AgentsService;
  runs: RunsService;
  events: EventStore;
  approvals: ApprovalsService;
  /** Absent where no run can ask (then no question is ever pending). */
  questions?: QuestionsService;
  health: {
    version: string;
    startedAt: Date;
    /** The store's state (backend, connection, writes waiting). */
    store?: () => StoreHealth;
    /** This node's id, on a cluster. */
    node?: string;
    /** The ids of the serving agents whose sandbox is off or shares the host's network. */
    unsandboxedAgents?: () => string[];
  };
  /** Whether the store can write; while it cannot, new runs are refused with 507 STORAGE_FULL. */
  storage?: StorageStatus;
  /** The agents' memories (GET/PUT /agents/:id/memory, /memories/:scope); absent: none kept. */
  memories?: MemoryOperators;
  /** For the live stream and the metrics. */
  bus: EventFeed;
  /** Webhook triggers' deliveries (`POST /hooks/<agent>/<name>`); absent: every delivery is refused. */
  hooks?: {
    receive(delivery: HookDelivery): Promise<HookAnswer>;
    /** Config `triggers.webhook_body_limit`; absent: 1 MiB. */
    readonly bodyLimitBytes?: number;
  };
  /** Model calls and the circuit breaker, for the metrics; absent when the model is not a ModelClient. */
  llm?: LlmTelemetry | undefined;
  /** Named tokens; absent where the daemon has none (then /tokens answers CONFLICT). */
  tokens?: TokensService;
  /** The audit trail; absent: actions are not recorded and GET /audit is empty. */
  audit?: AuditService;
  /** Config `telemetry.traces.trace_url`: `GET /runs/:run` links the run's trace with it. */
  traceUrl?: string | undefined;
  /** Operators' enable/disable of agents (POST /agents/:id/enable|disable); absent: refused. */
  switches?: AgentSwitches;
  /** `GET /triggers`: every trigger served, with its health on this node; absent: none. */
  triggers?: { list(): TriggerStatus[] };
  /** `GET /deliveries` and the delivery metrics; absent where nothing delivers. */
  deliveries?: DeliveriesService;
}
