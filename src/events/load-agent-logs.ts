import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import { agentEventsDirectory, agentOfEventsFile } from "./event-paths.js";
import { readLogTail } from "./log-tail.js";
import { parseStoredEvent } from "./stored-event-schema.js";

/** One event of a log's tail, ready for a ring buffer. */
export interface LoadedEvent {
  id: number;
  time: number;
  line: string;
  /** Store-wide order, assigned by `assignSequences`. */
  sequence: number;
}

/** The tail of one agent's log: its last events (oldest first) and the last id ever given. */
export interface LoadedAgentLog {
  agent: string;
  events: LoadedEvent[];
  lastId: number;
}

/**
 * Reads the last `count` events of every `events/<agent>.jsonl`, touching only each file's end, so
 * start-up stays fast with many agents and long histories. Torn last lines are cut off the files;
 * damaged or out-of-order lines are skipped with a warning.
 */
export function loadAgentLogs(dataDirectory: string, count: number, logger: Logger): LoadedAgentLog[] {
  const directory = agentEventsDirectory(dataDirectory);
  if (!existsSync(directory)) return [];
  const logs: LoadedAgentLog[] = [];
  for (const fileName of readdirSync(directory).sort()) {
    const agent = agentOfEventsFile(fileName);
    if (agent === undefined) continue;
    const file = path.join(directory, fileName);
    const tail = readLogTail(file, count);
    if (tail.truncatedBytes > 0) {
      logger.warn(
        { file, bytes: tail.truncatedBytes },
        "cut a torn last line off an event log (crash mid-write)",
      );
    }
    const events: LoadedEvent[] = [];
    let lastId = 0;
    let skipped = 0;
    for (const line of tail.lines) {
      const event = parseStoredEvent(line);
      if (!event || event.agent !== agent || event.id <= lastId) {
        skipped++;
        continue;
      }
      lastId = event.id;
      events.push({ id: event.id, time: Date.parse(event.time) || 0, line, sequence: 0 });
    }
    if (skipped > 0) logger.warn({ file, lines: skipped }, "skipped damaged lines in an event log");
    logs.push({ agent, events, lastId });
  }
  assignSequences(logs);
  return logs;
}

/**
 * Numbers the loaded events 1..M in time order (the merged feed's order), keeping each agent's
 * numbers increasing with its ids even if the clock once went backwards.
 */
export function assignSequences(logs: LoadedAgentLog[]): void {
  const all = logs.flatMap((log) => log.events.map((event) => ({ agent: log.agent, event })));
  all.sort(
    (left, right) =>
      left.event.time - right.event.time ||
      (left.agent < right.agent ? -1 : left.agent > right.agent ? 1 : 0) ||
      left.event.id - right.event.id,
  );
  const ranks = new Map<string, number[]>();
  all.forEach(({ agent }, index) => {
    const agentRanks = ranks.get(agent) ?? [];
    agentRanks.push(index + 1);
    ranks.set(agent, agentRanks);
  });
  for (const log of logs) {
    const agentRanks = ranks.get(log.agent) ?? [];
    // Ranks were collected in increasing order: give them to the events in id order.
    log.events.forEach((event, index) => (event.sequence = agentRanks[index] ?? 0));
  }
}
