import { readFileSync } from "node:fs";
import { readEventLog } from "./read-event-log.js";
import { parseStoredEvent } from "./stored-event-schema.js";

/**
 * A run's lines as its agent's log holds them, oldest first: every event of a run is in its agent's
 * log before it is published, so a run log whose creation a crash cut off (missing, or empty) is
 * rebuilt from there. Synchronous: it runs where the run's next line is appended, before that line.
 */
export function runLinesOfAgentLog(agentFile: string, run: string): string[] {
  let text: string;
  try {
    text = readFileSync(agentFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const marker = JSON.stringify(run);
  return text.split("\n").filter((line) => line.includes(marker) && parseStoredEvent(line)?.run === run);
}

/** The same, read without blocking (serving a run's log), events with id > `after` only. */
export async function readRunLinesOfAgentLog(
  agentFile: string,
  run: string,
  after: number,
): Promise<Array<{ id: number; line: string }>> {
  const logged = await readEventLog(agentFile, after);
  return logged.filter(({ event }) => event.run === run).map(({ event, line }) => ({ id: event.id, line }));
}
