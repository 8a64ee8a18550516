import { RunRecordSchema } from "../../runs/run-record-schema.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { parseJsonAs } from "../../schema/parse-json-as.js";

/**
 * A run record as `agentd_runs.record` keeps it: JSON text (migration 6), not jsonb, which refuses
 * the `\u0000` a task, a result or a tool's failure text may hold — and with it the whole batch of
 * writes it came in. Undefined for a row that is not a valid record.
 */
export function parseRunRecord(text: unknown): RunRecord | undefined {
  return parseJsonAs(RunRecordSchema, text);
}
