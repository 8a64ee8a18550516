import { z } from "zod";
import { RunRecordObjectSchema } from "../runs/run-record-schema.js";
import { RunReasonSchema, RunStatusSchema } from "../run-vocabulary/run-status.js";

/**
 * What the API answers, as zod schemas: the OpenAPI document's response schemas are made from
 * them, and tests check real answers against them. Objects are loose (extra fields allowed), so a
 * field added to an answer never breaks a client generated from an older document.
 */

/** `{ "error": { "code", "message", "field"?, "hint"? } }`: every 4xx and 5xx answer. */
export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({
    code: z.string().describe("a stable error code such as BAD_REQUEST or NOT_FOUND"),
    message: z.string(),
    field: z.string().optional().describe("the request field at fault"),
    hint: z.string().optional().describe("what to do"),
  }),
});

export const HealthSchema = z.looseObject({
  /**
   * starting: the daemon listens but is still reading its agents (other requests wait for it);
   * store_unavailable: the daemon answers, but its store (PostgreSQL) cannot be reached;
   * degraded: the daemon works but refuses new runs, `reasons` says why (its store is full).
   */
  status: z.enum(["ok", "starting", "shutting_down", "store_unavailable", "degraded"]),
  /** What keeps the daemon from working fully (empty when `ok`): `{ code, message, … }` each. */
  reasons: z
    .array(
      z.looseObject({
        code: z.string().describe("STORAGE_FULL"),
        message: z.string(),
        error: z
          .string()
          .optional()
          .describe("the errno or SQLSTATE the write failed with: ENOSPC, EDQUOT, EROFS, 53100"),
        file: z.string().optional().describe("the file the write failed on, relative to data_dir"),
        since: z.string().optional(),
      }),
    )
    .optional(),
  version: z.string(),
  uptime_seconds: z.number().int(),
  /** Where durable state lives, and whether it can be reached (writes wait and retry when not). */
  store: z
    .looseObject({
      backend: z.enum(["files", "postgres"]),
      connected: z.boolean(),
      pending_writes: z.number().int(),
      error: z.string().optional(),
    })
    .optional(),
  /** This daemon's node id in a cluster (postgres store). */
  node: z.string().optional(),
  unsandboxed_agents: z
    .array(z.string())
    .optional()
    .describe(
      "ids of the serving agents whose sandbox is off or that share the host's network (network: all)",
    ),
});

export const AgentSummarySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  valid: z.boolean(),
  errors: z.array(z.string()),
  error_details: z
    .array(
      z.looseObject({
        code: z.string(),
        message: z.string(),
        file: z.string().optional(),
        line: z.number().int().optional(),
        field: z.string().optional(),
        hint: z.string().optional(),
      }),
    )
    .optional()
    .describe("the same errors, structured: where (file, line, field), what and what to do"),
  warnings: z.array(z.string()),
  worker: z.string().describe('"llm" or "cli:<tool>"'),
  schedule: z.looseObject({ cron: z.string(), timezone: z.string().nullable() }).nullable(),
  next_fire: z.string().nullable().describe("next scheduled fire, ISO time"),
  enabled: z.boolean(),
  switched_off: z
    .looseObject({ by: z.string(), at: z.string() })
    .nullable()
    .optional()
    .describe("an operator turned the agent off (POST /agents/:id/disable): who and when; null otherwise"),
  unsandboxed: z
    .boolean()
    .describe(
      "its sandbox is off or shares the host's network: every run starts with an UNSANDBOXED warning",
    ),
  last_run: z
    .looseObject({
      id: z.string(),
      status: RunStatusSchema,
      reason: RunReasonSchema.nullable(),
      created_at: z.string().optional(),
      started_at: z.string().nullable().optional(),
      ended_at: z.string().nullable(),
      cost_usd: z.number().optional(),
    })
    .nullable(),
});

/** `next` of a list page: pass it as `after` for the next page; null on the last page. */
const NextCursorSchema = z
  .string()
  .nullable()
  .describe("pass as `after` for the next page; null: the last page");

export const AgentListSchema = z.looseObject({
  agents: z.array(AgentSummarySchema),
  agents_dir: z.string().optional(),
  next: NextCursorSchema,
});

/** What an agent's sandboxed children see of the filesystem: `src/sandbox/sandbox-view.ts`. */
export const SandboxViewSchema = z.looseObject({
  writable: z.array(z.string()),
  read_only: z.array(z.string()),
  hidden: z.array(z.string()).describe("empty, or not there at all"),
  private: z
    .array(z.string())
    .describe("writable paths that are a fresh empty folder per child, not the host's (/tmp)"),
  network: z
    .union([z.enum(["none", "all"]), z.array(z.string())])
    .describe("none, all, or the hosts reachable through agentd's proxy"),
});

/** The commands of one hook point, as GET /agents/:id answers them. */
const HookListSchema = z.array(
  z.looseObject({
    command: z.string(),
    timeout_ms: z.number(),
    source: z.enum(["config", "agent"]),
    tools: z.array(z.string()).optional(),
  }),
);

export const AgentDetailSchema = AgentSummarySchema.extend({
  file: z.string(),
  sandbox_view: SandboxViewSchema.nullable().describe(
    "paths by what the agent's shell commands and hooks see there (the deepest listed path decides); null with sandbox mode off or without a valid definition",
  ),
  definition: z
    .looseObject({
      system_prompt: z.string(),
      model: z.string(),
      fallback_models: z.array(z.string()),
      tools: z.array(z.string()),
      permissions: z.looseObject({
        allow: z.array(z.string()),
        ask: z.array(z.string()),
        deny: z.array(z.string()),
      }),
      limits: z.record(z.string(), z.number()),
      secrets: z.array(z.string()).describe("names only, never values"),
      preset_chain: z.array(z.string()),
      hash: z.string(),
      capabilities: z.enum(["full", "read-only", "no-tools"]),
      sandbox_mode: z.enum(["workspace-write", "read-only", "off"]),
      hooks: z
        .object({ before_tool: HookListSchema, after_tool: HookListSchema, on_run_end: HookListSchema })
        .describe("config hooks first, then the agent's"),
    })
    .nullable(),
});

/** A run as the API answers it: the stored record's schema, open to fields added later. */
export const RunRecordSchema = RunRecordObjectSchema.extend({
  id: z.string().describe("r_…"),
  trace_url: z
    .string()
    .optional()
    .describe("the run's trace in the trace UI config telemetry.traces.trace_url names"),
}).loose();

export const RunListSchema = z.looseObject({ runs: z.array(RunRecordSchema) });

export const RunStartedSchema = z.looseObject({
  run: z.string().describe("the new run's id"),
  status: RunStatusSchema,
  trace_id: z.string().optional().describe("the run's OpenTelemetry trace, when traces are on"),
});

/** POST /agents/:id/runs with an Idempotency-Key already used: the run that key made. */
export const RunDuplicateSchema = z.looseObject({
  run: z.string().describe("the id of the run the same Idempotency-Key made"),
  status: RunStatusSchema.describe("that run's status now"),
  duplicate: z.literal(true),
  trace_id: z.string().optional().describe("that run's OpenTelemetry trace, when traces are on"),
});

export const EventSchema = z.looseObject({
  id: z.number().int().describe("per agent, from 1, never reused"),
  agent: z.string(),
  run: z.string().nullable(),
  type: z.string().describe("status, thought, action, observation, error, warning, approval, …"),
  time: z.string(),
  data: z.record(z.string(), z.unknown()).describe("depends on type"),
});

export const EventPageSchema = z.looseObject({
  events: z.array(EventSchema),
  next: z.number().int().describe("pass as after to get what follows"),
  oldest: z.number().int().describe("the oldest id still in memory"),
  missed: z.number().int().describe("events between after and oldest that fell out of memory"),
});

export const MergedEventPageSchema = z.looseObject({
  events: z.array(EventSchema),
  next: z.string().describe("opaque cursor: pass as after"),
  missed: z.number().int(),
});

export const RunEventsSchema = z.looseObject({ events: z.array(EventSchema), next: z.number().int() });

export const PendingApprovalSchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  run: z.string(),
  tool: z.string(),
  arguments: z.unknown().optional(),
  requested_at: z.string().optional(),
  expires_at: z.string().optional(),
  reason: z.string().optional().describe("why the permission check asked"),
  on_timeout: z.enum(["deny", "approve"]).optional().describe("what happens at expires_at without an answer"),
});

export const ApprovalListSchema = z.looseObject({
  approvals: z.array(PendingApprovalSchema),
  next: NextCursorSchema,
});

export const DecisionSchema = z.looseObject({
  approval: z.string(),
  decision: z.enum(["approve", "deny"]),
  scope: z.enum(["once", "run"]),
});

export const PendingQuestionSchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  run: z.string(),
  question: z.string(),
  choices: z.array(z.string()).optional(),
  asked_at: z.string(),
  expires_at: z.string(),
});

export const QuestionListSchema = z.looseObject({
  questions: z.array(PendingQuestionSchema),
  next: NextCursorSchema,
});

export const AnswerSchema = z.looseObject({ question: z.string(), run: z.string(), answer: z.string() });

/** One delivery of a run's outcome to a target (`GET /deliveries`). */
export const DeliverySchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  run: z.string().nullable(),
  target: z.string(),
  to: z.enum(["webhook", "slack", "discord", "telegram", "email", "file"]),
  when: z.enum(["always", "failure", "changed", "waiting", "agent"]),
  status: z.enum(["pending", "retrying", "sent", "failed"]),
  attempts: z.array(
    z.looseObject({
      at: z.string(),
      ok: z.boolean(),
      status_code: z.number().int().optional(),
      error: z.string().optional(),
    }),
  ),
  created_at: z.string(),
  updated_at: z.string(),
  next_attempt_at: z.string().optional(),
  remaining_recipients: z
    .array(z.string())
    .optional()
    .describe("email: the addresses the server refused for now, the only ones the next attempt goes to"),
  refused_recipients: z
    .array(z.string())
    .optional()
    .describe(
      "email: the addresses the server refused for good while others were retried; the delivery ends failed naming them",
    ),
});

/** One trigger with its health on the node answering (`GET /triggers`). */
export const TriggerStatusSchema = z.looseObject({
  agent: z.string(),
  name: z.string(),
  kind: z.enum(["webhook", "after", "watch"]),
  detail: z.string().describe("the route (webhook), the agent followed (after), the folder and glob (watch)"),
  last_fired_at: z.string().nullable().describe("when it last started a run"),
  last_outcome: z.enum(["accepted", "refused", "duplicate", "rate_limited", "skipped", "failed"]).nullable(),
  last_outcome_at: z.string().nullable(),
  counts: z.looseObject({
    accepted: z.number().int(),
    refused: z.number().int(),
    duplicate: z.number().int(),
    rate_limited: z.number().int(),
    skipped: z.number().int(),
    failed: z.number().int(),
  }),
  last_error: z.string().nullable(),
  watching: z.boolean().optional().describe("watch triggers: whether this node watches the folder"),
});

export const TriggerListSchema = z.looseObject({
  triggers: z.array(TriggerStatusSchema),
  node: z.string().nullable().describe("the node whose counts these are (a cluster); null alone"),
});

export const DeliveryListSchema = z.looseObject({
  deliveries: z.array(DeliverySchema),
  next: z.string().nullable().describe("pass as `before` for the next page; null: the last page"),
});

/** One configured delivery target with its health (`GET /deliveries/targets`). */
export const DeliveryTargetStatusSchema = z.looseObject({
  agent: z
    .string()
    .nullable()
    .describe("the agent whose deliver: names it; null: a config target no agent names"),
  target: z.string().describe("the config name, or <kind>#<index> in the agent's deliver:"),
  to: z.enum(["webhook", "slack", "discord", "telegram", "email", "file"]),
  when: z.array(z.enum(["always", "failure", "changed", "waiting", "agent"])),
  shared: z.boolean().describe("a config deliveries.targets entry"),
  destination: z
    .string()
    .describe("where it goes, credentials left out: a URL's scheme and host, a chat, the recipients, a path"),
  health: z
    .enum(["ok", "retrying", "failing", "untried"])
    .describe("failing: its latest finished deliveries failed; untried: none finished yet"),
  last_status: z.enum(["pending", "retrying", "sent", "failed"]).nullable(),
  last_at: z.string().nullable().describe("when its newest delivery last changed"),
  last_error: z.string().nullable().describe("the last error of its newest delivery not sent, masked"),
  failing_streak: z.number().int().describe("its newest finished deliveries that failed, in a row"),
});

export const DeliveryTargetListSchema = z.looseObject({ targets: z.array(DeliveryTargetStatusSchema) });

/** One change of a memory in its history (`GET /agents/:id/memory/history`). */
const MemoryChangeSchema = z.looseObject({
  id: z.number().int(),
  time: z.string(),
  agent: z.string().describe("the agent whose log told the change"),
  run: z.string().nullable().describe("the run whose memory tool made it; null for an operator's"),
  by: z.enum(["agent", "operator"]),
  actor: z.looseObject({ kind: z.string(), name: z.string() }).optional(),
  operation: z.enum(["add", "replace", "remove", "set"]),
  text: z.string().optional(),
  old: z.string().optional(),
  new: z.string().optional(),
  added: z.array(z.string()).optional().describe("a set: the lines it added"),
  removed: z.array(z.string()).optional().describe("a set: the lines it removed"),
  version: z.string(),
  chars: z.number().int(),
});

/** A memory's history: its changes, newest first, and whether the logs were read whole. */
export const MemoryHistorySchema = z.looseObject({
  memory: z.string(),
  changes: z.array(MemoryChangeSchema),
  complete: z.boolean().describe("false when the agents' logs are longer than what was read"),
});
