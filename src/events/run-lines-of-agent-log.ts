import { readFileSync } from "node:fs";
import type { PersistedLine } from "./event-log.js";
import { readEventLog } from "./read-event-log.js";
import { salvageLine } from "./salvage-line.js";

/**
 * Every run's lines in an agent's log, oldest first, read at once: every event of a run is in its
 * agent's log before it is published, so a run log that a crash left missing (the run was still
 * queued, its log not created yet) is rebuilt from there. Synchronous, as the append it precedes; a
 * restart after a kill -9 in a burst rebuilds hundreds of logs from one agent's log, read once.
 */
export function runLinesOfAgentLog(agentFile: string): Map<string, string[]> {
  const byRun = new Map<string, string[]>();
  let text: string;
  try {
    text = readFileSync(agentFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return byRun;
    throw error;
  }
  for (const line of text.split("\n")) {
    if (!line.includes('"run":"')) continue;
    for (const { event, line: text } of salvageLine(line).events) {
      if (!event.run) continue;
      let lines = byRun.get(event.run);
      if (!lines) byRun.set(event.run, (lines = []));
      lines.push(text);
    }
  }
  return byRun;
}

/** One run's events with id > `after` in its agent's log, read without blocking (serving its history). */
export async function readRunLinesOfAgentLog(
  agentFile: string,
  run: string,
  after: number,
): Promise<PersistedLine[]> {
  const logged = await readEventLog(agentFile, after);
  return logged.filter(({ event }) => event.run === run).map(({ event, line }) => ({ id: event.id, line }));
}
