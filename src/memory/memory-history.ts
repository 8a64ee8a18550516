import type { AgentEvent } from "../events/agent-event.js";

/** One change of a memory, as the history shows it: when, by whom, what. */
export interface MemoryHistoryEntry {
  /** The event's id in `agent`'s log, and its time. */
  id: number;
  time: string;
  /** The agent whose log told it (for a shared memory: the first of its agents that did). */
  agent: string;
  /** The run whose memory tool made the change; null for an operator's. */
  run: string | null;
  by: "agent" | "operator";
  /** The operator: the token, dashboard session or CLI that sent the PUT. */
  actor?: { kind: string; name: string };
  operation: "add" | "replace" | "remove" | "set";
  text?: string;
  old?: string;
  new?: string;
  added?: string[];
  removed?: string[];
  cut?: true;
  /** The memory's version and size after the change. */
  version: string;
  chars: number;
}

/** Where the agents' logs are read from (the EventStore). */
export interface MemoryHistorySource {
  lastId(agent: string): number;
  history(agent: string, after: number, limit?: number): Promise<Array<{ id: number; line: string }>>;
}

/** The events of each agent's log the history reads at most, newest first: a bounded cost per look. */
export const HISTORY_SCAN_EVENTS = 20_000;
const PAGE_EVENTS = 5_000;

/**
 * The changes of one memory (`agent:<id>` or `shared:<scope>`), newest first, at most `limit`,
 * from the `memory` events in the logs of the agents that use it (a shared memory's change is told
 * in each of its agents' logs: told once here). Each log is read back over its last
 * HISTORY_SCAN_EVENTS events; `complete` is false when a log is longer than that (older changes
 * are still in `GET /agents/:id/events` history until retention prunes them).
 */
export async function memoryHistory(
  memory: string,
  agents: readonly string[],
  source: MemoryHistorySource,
  limit: number,
): Promise<{ changes: MemoryHistoryEntry[]; complete: boolean }> {
  const byVersion = new Map<string, MemoryHistoryEntry>();
  let complete = true;
  for (const agent of agents) {
    const last = source.lastId(agent);
    const from = Math.max(0, last - HISTORY_SCAN_EVENTS);
    if (from > 0) complete = false;
    for (let after = from; after < last;) {
      const page = await source.history(agent, after, PAGE_EVENTS);
      if (page.length === 0) break;
      after = page.at(-1)?.id ?? last;
      for (const { line } of page) {
        // Cheap test first: most lines of a log are not memory events.
        if (!line.includes('"type":"memory"')) continue;
        const event = JSON.parse(line) as AgentEvent;
        if (event.type !== "memory" || event.data.memory !== memory) continue;
        // One change told in several agents' logs: the same version, run and operation, within a second.
        const key = `${event.data.version}|${event.run ?? ""}|${event.data.operation}|${event.time.slice(0, 19)}`;
        if (byVersion.has(key)) continue;
        byVersion.set(key, {
          id: event.id,
          time: event.time,
          agent: event.agent,
          run: event.run,
          ...event.data,
        });
      }
    }
  }
  const changes = [...byVersion.values()].sort((left, right) => right.time.localeCompare(left.time));
  return { changes: changes.slice(0, limit), complete };
}
