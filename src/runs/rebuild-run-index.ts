import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { someDirectoryEntry } from "../util/some-directory-entry.js";
import type { Logger } from "../logging/logger.js";
import { replaceFileSync } from "../util/replace-file.js";
import { inspectRecordFile } from "./damaged-run-files.js";
import { DEFAULT_SEGMENT_BYTES, RunIndex, parseJson } from "./run-index.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { type RunIndexLine, RunIndexEntrySchema } from "./run-record-schema.js";

const RECORD_FILE = /^r_[0-9a-z]+\.json$/;
const SEGMENT_FILE = /^\d{8}\.jsonl$/;

/** A run's line in the index. */
export function indexLineOf(record: RunRecord): RunIndexLine {
  return {
    run: record.id,
    agent: record.agent,
    created_at: record.created_at,
    ...(record.parent_run !== undefined ? { parent_run: record.parent_run } : {}),
    ...(record.idempotency_key !== undefined ? { idempotency_key: record.idempotency_key } : {}),
  };
}

/**
 * Reads one `runs/<run>.json` (never through a symbolic link); undefined when missing. A damaged
 * one is logged and left where it is (RunStore moves it aside and rebuilds it from its events).
 */
export function readRecordFile(file: string, logger: Logger): RunRecord | undefined {
  const state = inspectRecordFile(file);
  if (state.kind === "read") return state.record;
  if (state.kind === "damaged")
    logger.warn({ file, reason: state.reason }, "skipping an unreadable run record");
  return undefined;
}

/** Whether `runs/` holds any run record file (a folder whose index went missing). */
export function hasRecordFiles(runsDirectory: string): boolean {
  return someDirectoryEntry(runsDirectory, (name) => RECORD_FILE.test(name));
}

/**
 * Every run record file in `runs/` (the repair path: it reads them all): each readable one, and
 * what `repair` makes of each damaged one (the file, its run id, why).
 */
export function readAllRecordFiles(
  runsDirectory: string,
  repair: (file: string, run: string, reason: string) => RunRecord | undefined,
): RunRecord[] {
  if (!existsSync(runsDirectory)) return [];
  return readdirSync(runsDirectory)
    .filter((name) => RECORD_FILE.test(name))
    .flatMap((name) => {
      const file = path.join(runsDirectory, name);
      const state = inspectRecordFile(file);
      if (state.kind === "read") return [state.record];
      if (state.kind === "missing") return [];
      return repair(file, name.slice(0, -".json".length), state.reason) ?? [];
    });
}

/**
 * The runs of the old single-file index, `runs/index.jsonl` (whole creation records), in its
 * order: each run's record file where it has one, else the record its line holds.
 */
export function readOldIndex(file: string, runsDirectory: string, logger: Logger): RunRecord[] {
  const records: RunRecord[] = [];
  let unreadable = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const parsed = RunIndexEntrySchema.safeParse(parseJson(line));
    if (!parsed.success) {
      unreadable += 1;
      continue;
    }
    const record =
      readRecordFile(path.join(runsDirectory, `${parsed.data.run}.json`), logger) ?? parsed.data.record;
    if (record) records.push(record);
  }
  if (unreadable > 0)
    logger.warn({ file, lines: unreadable }, "skipped unreadable lines of the old run index");
  return records;
}

/** Creation order: by creation time, then by id (sortable within a millisecond). */
export function byCreation(left: RunRecord, right: RunRecord): number {
  if (left.created_at !== right.created_at) return left.created_at < right.created_at ? -1 : 1;
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

/**
 * Writes the index afresh from `records` (creation order): every segment replaced, each written
 * whole then renamed into place. The repair of an emptied or missing index, and the migration.
 */
export function writeIndex(
  indexDirectory: string,
  records: RunRecord[],
  segmentBytes = DEFAULT_SEGMENT_BYTES,
): void {
  mkdirSync(indexDirectory, { recursive: true, mode: 0o700 });
  // Only segment files: whatever was moved aside here stays.
  for (const name of readdirSync(indexDirectory)) {
    const file = path.join(indexDirectory, name);
    if (SEGMENT_FILE.test(name) && lstatSync(file).isFile()) rmSync(file, { force: true });
  }
  let segment = 1;
  let text = "";
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.id)) continue;
    seen.add(record.id);
    const line = `${JSON.stringify(indexLineOf(record))}\n`;
    if (text.length > 0 && text.length + line.length > segmentBytes) {
      replaceFileSync(path.join(indexDirectory, RunIndex.fileNameOf(segment)), text, { sync: false });
      segment += 1;
      text = "";
    }
    text += line;
  }
  if (text.length > 0)
    replaceFileSync(path.join(indexDirectory, RunIndex.fileNameOf(segment)), text, { sync: false });
}
