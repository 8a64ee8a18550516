import type { ErrorCode } from "../errors/error-codes.js";
import type { CliFailureKind } from "../run-vocabulary/cli-failure-kind.js";
import type { RunReason, RunStatus, Usage } from "../run-vocabulary/run-status.js";
import type { Actor } from "./actor.js";
import type { WarningCode } from "./warning-code.js";

/**
 * SPEC 5: the data of each event type. Field names are snake_case on the wire, like the rest of
 * agentd's files and API. Secret values never appear here: the bus masks them before publishing.
 */
export interface EventDataByType {
  status: {
    status: RunStatus;
    reason?: RunReason;
    message?: string;
    /** Set on every status event of a sub-agent's run. */
    parent_run?: string;
    /** A run's final status carries its usage and cost, so counters see every run, not only completed ones. */
    usage?: Usage;
    cost_usd?: number;
    /** On the `queued` event of a resumed run: the round its checkpoint was saved after. */
    resumed_from_round?: number;
  };
  thought: { text: string };
  action: { call_id: string; tool: string; arguments: unknown };
  observation: {
    call_id: string;
    tool: string;
    ok: boolean;
    output: string;
    duration_ms: number;
    truncated?: boolean;
  };
  error: { code: ErrorCode; message: string; retryable?: boolean };
  approval: {
    id: string;
    state: "requested" | "approved" | "denied" | "expired";
    tool: string;
    arguments?: unknown;
    /** When a requested approval expires (ISO time). */
    expires_at?: string;
    /** approved "for the rest of this run". */
    scope?: "once" | "run";
    by?: string;
    /** The tool call waiting for it: a run resumed after a crash finds the answer by it. */
    call_id?: string;
    /** Who approved or denied it (absent for the broker's own timeout and stop). */
    actor?: Actor;
    /** Why the permission check asked (the `ask` rule, or that no rule allows the call). */
    reason?: string;
  };
  /** `ask_human`: asked, then answered (by the API, the CLI or a terminal), expired, or cancelled by a stop. */
  question: {
    id: string;
    state: "asked" | "answered" | "expired" | "cancelled";
    question: string;
    choices?: string[];
    /** When an asked question expires (ISO time). */
    expires_at?: string;
    answer?: string;
    /** Who answered: "api", "tty"; "timeout" or "stop" for the broker itself. */
    by?: string;
    /** The `ask_human` call that asked: a run resumed after a crash finds the answer by it. */
    call_id?: string;
    /** Who answered (absent for the broker's own timeout and stop). */
    actor?: Actor;
  };
  /** A hook ran: `ok`, `denied` (a `before_tool` hook exited 2) or `failed` (never ends the run). */
  hook: {
    hook: "before_tool" | "after_tool" | "on_run_end";
    command: string;
    outcome: "ok" | "denied" | "failed";
    duration_ms: number;
    /** The tool call, at `before_tool` and `after_tool`. */
    call_id?: string;
    tool?: string;
    exit_code?: number;
    /** A denial's reason (the hook's stderr) or what went wrong. */
    message?: string;
    code?: "HOOK_FAILED";
  };
  /** `reason`: why the CLI failed (or `cooldown`), or the error code of the model given up on. */
  fallback: { from: string; to: string; reason: CliFailureKind | "cooldown" | ErrorCode; message: string };
  compaction: {
    method: "summary" | "truncation";
    messages_before: number;
    messages_after: number;
    tokens_before: number;
    tokens_after: number;
  };
  result: { text: string; usage: Usage; cost_usd: number; worker: string };
  /** `scheduled_for` is the latest missed fire; `count` how many fires were missed in all. */
  missed: { scheduled_for: string; on_missed: "run_once" | "skip"; count?: number; run?: string };
  skipped: {
    scheduled_for: string;
    /** queue_full: `overlap: queue` already holds config `scheduler.queue_limit` fires. */
    reason: "overlap" | "queue_full" | "disabled" | "invalid" | "cooldown";
    message?: string;
  };
  warning: { code: WarningCode; message: string };
  /** An audited action on the agent or the run (start, stop, pause, resume, answers): who did it. */
  audit: { action: string; actor: Actor; target?: string };
  /** One attempt to deliver a run's outcome to a target (SPEC 10, src/deliveries/). */
  delivery: {
    /** The target's name: a config `deliveries.targets` name, or `<kind>#<index>` in `deliver:`. */
    target: string;
    status: "sent" | "retrying" | "failed";
    attempt: number;
    error?: string;
    /** The delivery's id (`GET /deliveries`; the `webhook-id` of a webhook). */
    delivery?: string;
    /** When the next attempt is due (ISO time), while retrying. */
    next_attempt_at?: string;
  };
  /** A memory changed (src/memory): by a memory tool of a run, or by an operator (`set`). */
  memory: {
    /** `agent:<id>` or `shared:<scope>`. */
    memory: string;
    operation: "add" | "replace" | "remove" | "set";
    text?: string;
    old?: string;
    new?: string;
    by: "agent" | "operator";
    /** An operator's `set`: who, and the lines it added and removed (memory-line-changes.ts). */
    actor?: { kind: string; name: string };
    added?: string[];
    removed?: string[];
    cut?: true;
    /** The memory's version and size after the change. */
    version: string;
    chars: number;
  };
}

export type EventType = keyof EventDataByType;

/** What a producer publishes; the bus adds `id` and `time`. */
export type EventDraft = {
  [Type in EventType]: { agent: string; run: string | null; type: Type; data: EventDataByType[Type] };
}[EventType];

/** SPEC 5: one event as stored and served. `id` is per agent, from 1, never reused. */
export type AgentEvent = EventDraft & { id: number; time: string };

export type EventOf<Type extends EventType> = Extract<AgentEvent, { type: Type }>;
