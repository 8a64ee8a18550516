import { z } from "zod";
import type { RunRecord } from "./run-record.js";
import { RunReasonSchema, RunStatusSchema } from "./run-status.js";

const UsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

const RunTriggerSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("api") }),
  z.object({ kind: z.literal("cli") }),
  z.object({ kind: z.literal("schedule"), scheduled_for: z.string() }),
  z.object({ kind: z.literal("missed"), scheduled_for: z.string() }),
  z.object({ kind: z.literal("agent"), parent_run: z.string() }),
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
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  idempotency_key: z.string().optional(),
});
/** A run record read back from `<data_dir>/runs/<run>.json`: checked once where it enters. */
export const RunRecordSchema: z.ZodType<RunRecord> = RunRecordObjectSchema;

/**
 * One line of `<data_dir>/runs/index.jsonl`: every run in creation order, with the record it was
 * created with (`queued`), so creating a run is one append; `<run>.json` holds its later states.
 */
export const RunIndexEntrySchema = z.object({
  run: z.string().regex(/^r_[0-9a-z]+$/),
  agent: z.string(),
  created_at: z.string(),
  /** The record as created; absent in lines written before it was kept here. */
  record: RunRecordSchema.optional(),
});
export type RunIndexEntry = z.infer<typeof RunIndexEntrySchema>;
