import { readFileSync } from "node:fs";
import path from "node:path";
import { createLogger } from "../../src/logging/logger.js";
import { OpenRunsJournal } from "../../src/runs/open-runs-journal.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";

/**
 * A run's record as a restart would find it, read without touching anything: its file
 * `runs/<run>.json`, else its newest line in the open-runs journal (a run whose only change is its
 * launch has no file yet). Undefined when neither holds it.
 */
export function runRecordOnDisk(dataDirectory: string, runId: string): RunRecord | undefined {
  const runsDirectory = path.join(dataDirectory, "runs");
  try {
    return JSON.parse(readFileSync(path.join(runsDirectory, `${runId}.json`), "utf8")) as RunRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const logger = createLogger({ level: "silent", pretty: false });
  return new OpenRunsJournal({ runsDirectory, logger }).read().records.get(runId);
}
