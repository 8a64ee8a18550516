import { z } from "zod";
import { RunStatusSchema } from "../run-vocabulary/run-status.js";
import { documentedAsNumber, withQuickCheck } from "./zod-route-schema.js";
import { SECONDS_PATTERN, WHOLE_NUMBER_PATTERN, quickObjectCheck } from "./quick-request-check.js";
import {
  IDEMPOTENCY_KEY_PATTERN,
  quickStartRunBody,
  quickStartRunHeaders,
  TRIGGER_KEY_PREFIX,
} from "./start-run-quick-checks.js";
import { DEFAULT_RUN_LIST_LIMIT, MAX_RUN_LIST_LIMIT } from "../runs/run-records.js";

/** Longest `wait` of a long poll, in seconds; larger values are cut to it. */
export const LONG_POLL_CAP_SECONDS = 60;
/** Most events one poll returns. */
export const MAX_POLL_LIMIT = 1_000;

const WholeNumber = z
  .string()
  .regex(WHOLE_NUMBER_PATTERN, "must be a whole number, 0 or more")
  .transform(Number);

/** An event id in the query (`after`): a whole number, 0 or more; `fallback` when absent. */
function eventIdAfter(fallback: number) {
  return documentedAsNumber(WholeNumber.default(fallback), {
    type: "integer",
    minimum: 0,
    default: fallback,
  });
}

/** A query's `limit`: a whole number from 1 to `max`, `fallback` when absent. */
export function limitUpTo(max: number, fallback: number) {
  const message = `must be a whole number from 1 to ${max}`;
  const limit = z
    .string()
    .regex(WHOLE_NUMBER_PATTERN, message)
    .transform(Number)
    .pipe(z.number().min(1, message).max(max, `must be at most ${max}`));
  return documentedAsNumber(limit.default(fallback), {
    type: "integer",
    minimum: 1,
    maximum: max,
    default: fallback,
  });
}

const WaitSeconds = documentedAsNumber(
  z
    .string()
    .regex(SECONDS_PATTERN, "must be a number of seconds, 0 or more")
    .transform((seconds) => Math.min(Number(seconds), LONG_POLL_CAP_SECONDS))
    .default(0),
  { type: "number", minimum: 0, default: 0 },
);

export const AgentParamsSchema = withQuickCheck(
  z.object({ id: z.string().min(1) }),
  quickObjectCheck({ id: { kind: "string", minLength: 1 } }),
);
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const RunParamsSchema = withQuickCheck(
  z.object({ run: z.string().regex(RUN_ID_PATTERN, "is not a run id (r_…)") }),
  quickObjectCheck({ run: { kind: "string", pattern: RUN_ID_PATTERN } }),
);
export const ApprovalParamsSchema = z.object({ id: z.string().min(1) });

/** POST /agents/:id/runs: the body is optional; without a task the agent's own `task` is used. */
export const StartRunBodySchema = withQuickCheck(
  z.strictObject({ task: z.string().trim().min(1, "must not be empty").optional() }).optional(),
  quickStartRunBody,
);

/** The longest `Idempotency-Key` taken, as most APIs that take one. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * POST /agents/:id/runs: the optional `Idempotency-Key` header (headers come lowercased): 1–255
 * printable ASCII characters, not blank. Other headers pass.
 */
export const StartRunHeadersSchema = withQuickCheck(
  z.looseObject({
    "idempotency-key": z
      .string()
      .max(IDEMPOTENCY_KEY_MAX_LENGTH, `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`)
      .regex(IDEMPOTENCY_KEY_PATTERN, "must be printable ASCII and not blank")
      .refine(
        (key) => !TRIGGER_KEY_PREFIX.test(key),
        "must not start with webhook:, after: or watch: (the keys of trigger runs)",
      )
      .optional()
      .describe(
        "any unique string (a UUID), not starting with webhook:, after: or watch:: the same key for the same agent within 24 h answers the run it made (200, duplicate: true) instead of starting another",
      ),
    traceparent: z
      .string()
      .optional()
      .describe(
        "W3C trace context: with traces on, the run's invoke_agent span is a child of this one (a malformed value starts a trace of its own)",
      ),
  }),
  quickStartRunHeaders(IDEMPOTENCY_KEY_MAX_LENGTH),
);

export const RunListQuerySchema = z.object({
  agent: z.string().min(1).optional(),
  status: RunStatusSchema.optional(),
  /** Only the sub-agent runs this run started. */
  parent: z.string().min(1).optional(),
  /** ISO time: only runs created at or after it (the dashboard's last 24 hours). */
  since: z.iso
    .datetime({ offset: true, error: "must be an ISO time such as 2026-01-31T09:00:00Z" })
    .transform((time) => new Date(time))
    .optional(),
  /** A run id: only runs created before it (the next page after a page that ended with it). */
  before: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "is not a run id (r_…)")
    .optional(),
  /** At most this many runs, the newest: 100 unless given, 1,000 at most. */
  limit: limitUpTo(MAX_RUN_LIST_LIMIT, DEFAULT_RUN_LIST_LIMIT),
});

/** Events one poll returns when `limit` is not given. */
export const DEFAULT_POLL_LIMIT = 100;

/** The quick reading of a `wait` (quick-request-check.ts). */
const QUICK_WAIT = { kind: "seconds", fallback: 0, cap: LONG_POLL_CAP_SECONDS } as const;

/** GET /agents/:id/events */
export const AgentEventsQuerySchema = withQuickCheck(
  z.object({
    after: eventIdAfter(0),
    limit: limitUpTo(MAX_POLL_LIMIT, DEFAULT_POLL_LIMIT),
    wait: WaitSeconds,
  }),
  quickObjectCheck({
    after: { kind: "whole", fallback: 0 },
    limit: { kind: "whole", fallback: DEFAULT_POLL_LIMIT, minimum: 1, maximum: MAX_POLL_LIMIT },
    wait: QUICK_WAIT,
  }),
);

/** Most events one page of a run's log holds (`limit`), and the default. */
export const MAX_RUN_EVENTS_LIMIT = 10_000;
export const DEFAULT_RUN_EVENTS_LIMIT = 1_000;

/** GET /runs/:run/events: one page of the run's log after `after`. */
export const RunEventsQuerySchema = withQuickCheck(
  z.object({
    after: eventIdAfter(0),
    limit: limitUpTo(MAX_RUN_EVENTS_LIMIT, DEFAULT_RUN_EVENTS_LIMIT),
  }),
  quickObjectCheck({
    after: { kind: "whole", fallback: 0 },
    limit: { kind: "whole", fallback: DEFAULT_RUN_EVENTS_LIMIT, minimum: 1, maximum: MAX_RUN_EVENTS_LIMIT },
  }),
);

/** GET /events: `after` is the opaque cursor of the previous response. */
export const MergedEventsQuerySchema = withQuickCheck(
  z.object({
    after: z.string().optional(),
    limit: limitUpTo(MAX_POLL_LIMIT, DEFAULT_POLL_LIMIT),
    wait: WaitSeconds,
  }),
  quickObjectCheck({
    after: { kind: "string", optional: true },
    limit: { kind: "whole", fallback: DEFAULT_POLL_LIMIT, minimum: 1, maximum: MAX_POLL_LIMIT },
    wait: QUICK_WAIT,
  }),
);

/** GET /agents/:id/events/stream: `after` replays like a Last-Event-ID header. */
export const StreamQuerySchema = withQuickCheck(
  z.object({
    after: documentedAsNumber(WholeNumber.optional(), { type: "integer", minimum: 0 }),
  }),
  quickObjectCheck({ after: { kind: "whole" } }),
);

/** Most items a page of a list (approvals, questions) holds, and the default. */
export const MAX_LIST_LIMIT = 10_000;
export const DEFAULT_LIST_LIMIT = 1_000;
/**
 * Agents a page of GET /agents holds, at most and by default: the registry holds every definition
 * in memory anyway, and a page of 10,000 agents is ~3 MB of JSON (~300 KB gzipped), so one page
 * is every agent of all but the largest folders, and the dashboard's ETag poll stays one request.
 */
export const MAX_AGENTS_LIMIT = 10_000;

/** `after` of a list: the `next` of the previous page. */
const ListCursor = z.string().min(1, "must be the `next` of the previous page").max(4_096).optional();

/** GET /agents: agents by id, a page at a time; `after` is the last id of the previous page. */
export const AgentListQuerySchema = z.object({
  after: ListCursor,
  limit: limitUpTo(MAX_AGENTS_LIMIT, MAX_AGENTS_LIMIT),
});

/** GET /approvals and GET /questions: oldest first, a page at a time. */
export const PendingListQuerySchema = z.object({
  after: ListCursor,
  limit: limitUpTo(MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT),
});

/** POST /approvals/:id */
export const DecisionBodySchema = z.strictObject(
  {
    decision: z.enum(["approve", "deny"], { error: 'must be "approve" or "deny"' }),
    scope: z.enum(["once", "run"], { error: 'must be "once" or "run"' }).optional(),
  },
  { error: 'a JSON object is required: { "decision": "approve" | "deny" }' },
);

export const QuestionParamsSchema = z.object({ id: z.string().min(1) });

/** POST /questions/:id */
export const AnswerBodySchema = z.strictObject(
  { answer: z.string({ error: "must be a string" }).trim().min(1, "must not be empty") },
  { error: 'a JSON object is required: { "answer": "…" }' },
);

/** GET /deliveries: newest first, a page at a time (`before`: the last delivery id of the page before). */
export const DeliveryListQuerySchema = z.object({
  status: z.enum(["pending", "retrying", "sent", "failed"]).optional(),
  agent: z.string().min(1).optional().describe("only this agent's deliveries"),
  run: z.string().min(1).optional().describe("only this run's deliveries"),
  before: z
    .string()
    .regex(/^d_[A-Za-z0-9]+$/, "is not a delivery id (d_…)")
    .optional(),
  limit: limitUpTo(MAX_LIST_LIMIT, 100),
});
