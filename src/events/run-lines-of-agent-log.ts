import { readFileSync } from "node:fs";
import { readEventLog } from "./read-event-log.js";
import { parseStoredEvent } from "./stored-event-schema.js";

/** How long an agent's log, read to rebuild run logs, is kept for the next rebuilds. */
const KEEP_MILLISECONDS = 2_000;

interface IndexedLine {
  id: number;
  line: string;
}

/**
 * A run's lines as its agent's log holds them, oldest first: every event of a run is in its agent's
 * log before it is published, so a run log whose creation a crash cut off (missing, or empty) is
 * rebuilt from there. Synchronous: it runs where the run's next line is appended, before that line.
 * A restart after a crash in a burst may rebuild hundreds of runs of one agent: each log is read
 * once, indexed by run, and kept for a moment for the rebuilds that follow.
 */
export class RunLinesOfAgentLogs {
  readonly #indexes = new Map<string, Map<string, IndexedLine[]>>();

  /**
   * The run's lines: those in `agentFile` before `appended`, then `appended` (the run's lines this
   * process wrote to the agent's log since, oldest first, which a kept index may not hold).
   */
  linesOf(agentFile: string, run: string, appended: readonly string[]): string[] {
    const firstAppended = appended[0] === undefined ? undefined : parseStoredEvent(appended[0])?.id;
    const before = (this.#indexOf(agentFile).get(run) ?? [])
      .filter(({ id }) => firstAppended === undefined || id < firstAppended)
      .map(({ line }) => line);
    return [...before, ...appended];
  }

  #indexOf(agentFile: string): Map<string, IndexedLine[]> {
    let index = this.#indexes.get(agentFile);
    if (index) return index;
    index = new Map();
    for (const line of readLines(agentFile)) {
      const event = parseStoredEvent(line);
      if (!event?.run) continue;
      let lines = index.get(event.run);
      if (!lines) index.set(event.run, (lines = []));
      lines.push({ id: event.id, line });
    }
    this.#indexes.set(agentFile, index);
    setTimeout(() => this.#indexes.delete(agentFile), KEEP_MILLISECONDS).unref();
    return index;
  }
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** The run's lines of an agent's log, read without blocking (serving a run's log), id > `after`. */
export async function readRunLinesOfAgentLog(
  agentFile: string,
  run: string,
  after: number,
): Promise<Array<{ id: number; line: string }>> {
  const logged = await readEventLog(agentFile, after);
  return logged.filter(({ event }) => event.run === run).map(({ event, line }) => ({ id: event.id, line }));
}
