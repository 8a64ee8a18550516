import { z } from "zod";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { RunReasonSchema, RunStatusSchema } from "../run-vocabulary/run-status.js";

const UsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

const RunTriggerSchema = z.union([
  z.object({ kind: z.literal("api") }),
  z.object({ kind: z.literal("cli") }),
  z.object({ kind: z.literal("schedule"), scheduled_for: z.string() }),
  z.object({
    kind: z.literal("missed"),
    scheduled_for: z.string(),
    fires: z.number().int().positive().optional(),
  }),
  z.object({ kind: z.literal("agent"), parent_run: z.string() }),
  z.object({
    kind: z.enum(["webhook", "after", "watch"]),
    name: z.string().optional(),
    id: z.string().optional(),
  }),
]);

/** The record's fields as an object schema, which the API's response document extends. */
export const RunRecordObjectSchema = z.object({
  id: z.string().regex(/^r_[0-9a-z]+$/),
  agent: z.string(),
  task: z.string(),
  status: RunStatusSchema,
  reason: RunReasonSchema.optional(),
  trigger: RunTriggerSchema,
  parent_run: z.string().optional(),
  definition_hash: z.string(),
  worker: z.string().optional(),
  created_at: z.string(),
  node: z.string().optional(),
  started_at: z.string().optional(),
  ended_at: z.string().optional(),
  usage: UsageSchema,
  cost_usd: z.number(),
  result: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() }).optional(),
  idempotency_key: z.string().optional(),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  span_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
  trace_sampled: z.literal(false).optional(),
});
/** A run record read back from `<data_dir>/runs/<run>.json`: checked once where it enters. */
export const RunRecordSchema: z.ZodType<RunRecord> = RunRecordObjectSchema;

/**
 * One line of the old `<data_dir>/runs/index.jsonl` (before the index was segmented): every run in
 * creation order, with the record it was created with. Read once, to migrate it (see run-index-files.ts).
 */
export const RunIndexEntrySchema = z.object({
  run: z.string().regex(/^r_[0-9a-z]+$/),
  agent: z.string(),
  created_at: z.string(),
  /** The record as created; absent in lines written before it was kept here. */
  record: RunRecordSchema.optional(),
});
export type RunIndexEntry = z.infer<typeof RunIndexEntrySchema>;

const RunIdSchema = z.string().regex(/^r_[0-9a-z]+$/);

/**
 * One line of a segment of the run index, `<data_dir>/runs/index/<segment>.jsonl`: a run in
 * creation order, with what listing filters on without reading its record (about 100 bytes).
 */
export const RunIndexLineSchema = z.object({
  run: RunIdSchema,
  agent: z.string(),
  created_at: z.string(),
  parent_run: z.string().optional(),
  /** The Idempotency-Key the run was posted with: a repeated request finds it here after a restart. */
  idempotency_key: z.string().optional(),
});
export type RunIndexLine = z.infer<typeof RunIndexLineSchema>;

/** The size of each index segment, by segment name, as the store last wrote it. */
export const SegmentSizesSchema = z.record(z.string(), z.number().int().min(0));

/**
 * One line of the open-runs journal `<data_dir>/runs/open/<n>.jsonl`, folded at start:
 * - `start`: first line of every journal file: the index segments' sizes and each agent's newest run;
 * - `record`: a run that is open (created, unfinished, or cut off by a crash or a shutdown), with
 *   the record it was created with (and where its index line ended) or had when the journal began;
 * - `closed`: the run is finished for good (or pruned): no longer open;
 * - `segments`: the index segments' sizes after a prune rewrote them.
 */
export const OpenRunsLineSchema = z.union([
  z.strictObject({
    start: z.strictObject({
      segments: SegmentSizesSchema,
      newest: z.record(z.string(), z.strictObject({ run: RunIdSchema, created_at: z.string() })),
    }),
  }),
  z.strictObject({
    record: RunRecordSchema,
    /** Where the index segment ended once the run's line was in it. */
    index: z.strictObject({ segment: z.string(), bytes: z.number().int().min(0) }).optional(),
  }),
  z.strictObject({ closed: RunIdSchema }),
  z.strictObject({ segments: SegmentSizesSchema }),
]);
export type OpenRunsLine = z.infer<typeof OpenRunsLineSchema>;
