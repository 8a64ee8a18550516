import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../logging/logger.js";
import {
  agentEventsDirectory,
  agentSegmentFile,
  agentSegmentsDirectory,
  lastIdOfSegmentFile,
} from "./event-paths.js";
import { ringLine } from "./event-ring.js";
import type { LoadedAgentLog } from "./load-agent-logs.js";
import { readLogTail } from "./log-tail.js";
import { parseStoredEvent } from "./stored-event-schema.js";

/** The current segment of an agent's log is closed once it passes this size. */
export const DEFAULT_AGENT_SEGMENT_BYTES = 8 * 1024 * 1024;

/** One closed segment of an agent's log. */
export interface AgentLogSegment {
  file: string;
  /** The id of its last event. */
  lastId: number;
}

/** An agent's closed segments, oldest first (none when it never rolled). */
export function agentLogSegments(dataDirectory: string, agent: string): AgentLogSegment[] {
  const directory = agentSegmentsDirectory(dataDirectory, agent);
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  return names
    .flatMap((name) => {
      const lastId = lastIdOfSegmentFile(name);
      return lastId === undefined ? [] : [{ file: path.join(directory, name), lastId }];
    })
    .sort((left, right) => left.lastId - right.lastId);
}

/** The agents that have closed segments. */
export function agentsWithSegments(dataDirectory: string): string[] {
  const directory = path.join(agentEventsDirectory(dataDirectory), "segments");
  if (!existsSync(directory)) return [];
  return readdirSync(directory).filter((name) => {
    try {
      return agentLogSegments(dataDirectory, name).length > 0;
    } catch {
      // Not an agent id: nothing of ours.
      return false;
    }
  });
}

/**
 * Closes the current segment of an agent's log: renamed into `events/segments/<agent>/`, named by
 * its last id. The caller closes its descriptor of the current file at once (the next event
 * starts a new one). Both happen on the event loop, between two appends.
 */
export function closeAgentSegment(
  dataDirectory: string,
  agent: string,
  currentFile: string,
  lastId: number,
): void {
  const target = agentSegmentFile(dataDirectory, agent, lastId);
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  renameSync(currentFile, target);
}

/**
 * Completes the tails `loadAgentLogs` read from the current segments: an agent whose current
 * segment holds fewer than `count` events (it was just closed, or a crash came right after) gets
 * the end of its closed segments before them, newest first, until it has `count` (a segment of
 * long events holds few), and its last id from there when the current one is empty, so ids are
 * never given twice. Returns whether anything was added.
 */
export function addSegmentTails(
  dataDirectory: string,
  logs: LoadedAgentLog[],
  count: number,
  logger: Logger,
  largeLineChars: number,
): boolean {
  let added = false;
  const byAgent = new Map(logs.map((log) => [log.agent, log]));
  for (const agent of agentsWithSegments(dataDirectory)) {
    let log = byAgent.get(agent);
    if (log && log.events.length >= count) continue;
    const segments = agentLogSegments(dataDirectory, agent);
    const newest = segments.at(-1);
    if (!newest) continue;
    if (!log) {
      log = { agent, events: [], lastId: 0 };
      logs.push(log);
    }
    log.lastId = Math.max(log.lastId, newest.lastId);
    // Newest first, back until the ring is full: 8 MB of long events (1 MiB each) is 8 events.
    for (let index = segments.length - 1; index >= 0 && log.events.length < count; index--) {
      const firstLater = log.events[0]?.id ?? Number.POSITIVE_INFINITY;
      const earlier = [];
      for (const line of readLogTail(segments[index]?.file ?? "", count - log.events.length).lines) {
        const event = parseStoredEvent(line);
        if (!event || event.agent !== agent || event.id >= firstLater) continue;
        earlier.push({
          id: event.id,
          time: Date.parse(event.time) || 0,
          line: ringLine(line, largeLineChars),
          sequence: 0,
        });
      }
      log.events.unshift(...earlier);
      log.lastId = Math.max(log.lastId, earlier.at(-1)?.id ?? 0);
    }
    added = true;
  }
  if (added) logger.debug("read the end of closed agent-log segments");
  return added;
}

/**
 * Deletes the closed segments whose every event is older than `days` (its last write, the file's
 * modification time, is before the cutoff); the current segment is never deleted. Returns how
 * many were deleted.
 */
export function pruneAgentSegments(
  dataDirectory: string,
  daysOf: (agent: string) => number | null,
  now: Date,
): number {
  let deleted = 0;
  for (const agent of agentsWithSegments(dataDirectory)) {
    const days = daysOf(agent);
    if (days === null) continue;
    const cutoff = now.getTime() - days * 86_400_000;
    for (const segment of agentLogSegments(dataDirectory, agent)) {
      const modified = statSync(segment.file, { throwIfNoEntry: false })?.mtimeMs;
      if (modified === undefined || modified >= cutoff) continue;
      rmSync(segment.file, { force: true });
      deleted += 1;
    }
  }
  return deleted;
}
