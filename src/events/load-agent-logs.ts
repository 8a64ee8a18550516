import { existsSync, readdirSync } from "node:fs";
import type { Logger } from "../logging/logger.js";
import { inspectLogFile, errorReason, moveAsideDamaged } from "./damaged-log-file.js";
import { agentEventsDirectory, agentEventsFile, agentOfEventsFile, runEventsFile } from "./event-paths.js";
import { type LogTail, readLogTail } from "./log-tail.js";
import { type LoggedEvent, salvageLine } from "./salvage-line.js";
import { DEFAULT_LARGE_LINE_CHARS, type RingLine, ringLine } from "./event-ring.js";

/** One event of a log's tail, ready for a ring buffer. */
export interface LoadedEvent {
  id: number;
  time: number;
  /** The line, or its stand-in when longer than the ring keeps (see LineOnDisk). */
  line: RingLine;
  /** Store-wide order, assigned by `assignSequences`. */
  sequence: number;
}

/** The tail of one agent's log: its last events (oldest first) and the last id ever given. */
export interface LoadedAgentLog {
  agent: string;
  events: LoadedEvent[];
  lastId: number;
}

/** A run whose log may hold ids its agent's log lost (a power loss, a log emptied or removed). */
export interface RunToCheck {
  run: string;
  agent: string;
}

export interface LoadAgentLogsOptions {
  dataDirectory: string;
  /** Events kept per agent (the ring buffer's size). */
  count: number;
  /**
   * Lines longer than this come as stand-ins (see LineOnDisk), so that one agent's whole tail is
   * held at a time only (default DEFAULT_LARGE_LINE_CHARS).
   */
  largeLineChars?: number;
  logger: Logger;
  /** The unfinished runs and each agent's newest: their logs' ends are read too. */
  runsToCheck?: RunToCheck[];
  /** Appends restored lines to a log, whole or not at all; throws when it cannot. */
  append: (file: string, text: string) => void;
  /** Event logs that could not be used nor moved aside are added here: nothing is written to them. */
  blocked: Set<string>;
}

/**
 * Reads the last `count` events of every `events/<agent>.jsonl`, touching only each file's end, so
 * start-up stays fast with many agents and long histories, and repairs what a crash or a full disk
 * left there, saying what it did:
 *
 * - a torn last line is cut (a last line that only lost its newline is ended);
 * - damaged lines are skipped with their file and line (or byte offset); events glued together on
 *   one line are read apart; a line whose id is not below every later one is left out of the ring;
 * - a folder or another non-regular file where the log should be is moved aside;
 * - events found in the logs of `runsToCheck` (or whole in a cut torn line) that the agent's log
 *   lost are appended to it again, and lines of those runs their log lost are appended to it.
 *
 * The last id is the highest ever seen: kept lines, skipped out-of-order ones, the id at the start
 * of a torn line and the run logs' ids, so an id that may have been reported is never given again.
 */
export function loadAgentLogs(options: LoadAgentLogsOptions): LoadedAgentLog[] {
  const directory = agentEventsDirectory(options.dataDirectory);
  const agents = new Set<string>();
  if (existsSync(directory)) {
    for (const fileName of readdirSync(directory).sort()) {
      const agent = agentOfEventsFile(fileName);
      if (agent !== undefined) agents.add(agent);
    }
  }
  const runsByAgent = new Map<string, string[]>();
  for (const { run, agent } of options.runsToCheck ?? []) {
    if (!isUsableName(options.dataDirectory, agent, run)) continue;
    agents.add(agent);
    const runs = runsByAgent.get(agent) ?? [];
    if (!runs.includes(run)) runs.push(run);
    runsByAgent.set(agent, runs);
  }
  const logs = [...agents].sort().map((agent) => loadAgentLog(options, agent, runsByAgent.get(agent) ?? []));
  assignSequences(logs);
  return logs;
}

function loadAgentLog(options: LoadAgentLogsOptions, agent: string, runs: string[]): LoadedAgentLog {
  const { logger, count } = options;
  const file = agentEventsFile(options.dataDirectory, agent);
  const tail = readTail(options, file);
  let highestId = 0;
  const found: LoggedEvent[] = [];
  const damaged: Array<{ line?: number; offset: number; salvaged: number }> = [];
  let crlf = 0;
  tail?.lines.forEach((text, index) => {
    const salvaged = salvageLine(text, agent);
    highestId = Math.max(highestId, salvaged.highestId);
    found.push(...salvaged.events);
    if (text.endsWith("\r")) crlf += 1;
    if (!salvaged.damaged) return;
    damaged.push({
      ...(tail.firstLine === undefined ? {} : { line: tail.firstLine + index }),
      offset: tail.offsets[index] ?? 0,
      salvaged: salvaged.events.length,
    });
  });
  warnDamagedLines(logger, file, damaged);
  if (crlf > 0) {
    logger.warn(
      { file, count: crlf },
      "read event log lines that end with CRLF (edited by another tool?): they are kept as they are, new lines end with LF",
    );
  }
  const { kept, dropped } = keepIncreasing(found);
  if (dropped.length > 0) {
    logger.warn(
      { file, ids: dropped.slice(0, 20).map(({ event }) => event.id) },
      "left lines out of order (an id not below the later ones) out of the events in memory",
    );
  }
  for (const { event } of found) highestId = Math.max(highestId, event.id);
  const lastKept = kept.at(-1)?.event.id ?? 0;

  // Events the agent's log lost, found whole elsewhere: in a cut torn line, or in run logs.
  const candidates: LoggedEvent[] = [];
  if (tail && tail.torn.length > 0) {
    const torn = salvageLine(tail.torn, agent);
    highestId = Math.max(highestId, torn.highestId);
    candidates.push(...torn.events);
  }
  const runTails = new Map<string, LoggedEvent[]>();
  for (const run of runs) {
    const runFile = runEventsFile(options.dataDirectory, run);
    const runTail = readTail(options, runFile, true);
    if (!runTail) continue;
    const events = runTail.lines.flatMap((text) => salvageLine(text, agent).events);
    runTails.set(run, events);
    candidates.push(...events.filter(({ event }) => event.run === run));
  }
  const restored = [
    ...new Map(
      candidates.filter(({ event }) => event.id > lastKept).map((one) => [one.event.id, one]),
    ).values(),
  ].sort((left, right) => left.event.id - right.event.id);
  if (restored.length > 0) {
    const text = restored.map(({ line }) => `${line}\n`).join("");
    if (write(options, file, text)) {
      logger.warn(
        { file, ids: [restored[0]?.event.id, restored.at(-1)?.event.id], count: restored.length },
        "restored events the agent's log lost from its run logs (or a torn line)",
      );
    }
    for (const { event } of restored) highestId = Math.max(highestId, event.id);
  }
  const all = [...kept, ...restored];
  restoreRunLogs(options, agent, all, runTails);
  const events = all.slice(-count).map(({ event, line }) => ({
    id: event.id,
    time: Date.parse(event.time) || 0,
    line: ringLine(line, options.largeLineChars ?? DEFAULT_LARGE_LINE_CHARS),
    sequence: 0,
  }));
  return { agent, events, lastId: highestId };
}

/**
 * Says which lines of an event log were damaged, in two warnings: lines skipped (nothing whole in
 * them: garbled, not JSON, no event, another agent's event) and lines holding events glued
 * together (read apart). Either way the file keeps the line; only what is served changes.
 */
function warnDamagedLines(
  logger: Logger,
  file: string,
  damaged: Array<{ line?: number; offset: number; salvaged: number }>,
): void {
  const skipped = damaged.filter((line) => line.salvaged === 0);
  const glued = damaged.filter((line) => line.salvaged > 0);
  if (skipped.length > 0) {
    logger.warn(
      { file, lines: skipped.slice(0, 20), count: skipped.length },
      "skipped damaged lines of an event log (garbled, or no event of this agent): they stay in the file and are not served",
    );
  }
  if (glued.length > 0) {
    logger.warn(
      { file, lines: glued.slice(0, 20), count: glued.length },
      "read apart events glued on one line of an event log (an append onto a torn line): each is served",
    );
  }
}

/**
 * A run log that lost its last lines (a power loss, a torn line cut) gets them back from the
 * agent's log, whose tail holds them.
 */
function restoreRunLogs(
  options: LoadAgentLogsOptions,
  agent: string,
  events: LoggedEvent[],
  runTails: Map<string, LoggedEvent[]>,
): void {
  for (const [run, runEvents] of runTails) {
    if (runEvents.length === 0) continue;
    const last = Math.max(...runEvents.map(({ event }) => event.id));
    const missing = events.filter(({ event }) => event.run === run && event.id > last);
    if (missing.length === 0) continue;
    const file = runEventsFile(options.dataDirectory, run);
    if (!write(options, file, missing.map(({ line }) => `${line}\n`).join(""))) continue;
    options.logger.warn(
      { file, agent, count: missing.length },
      "restored events a run log lost from its agent's log",
    );
  }
}

/**
 * The end of a log, repaired: a torn line cut (with a warning), a folder or other thing in its
 * place moved aside. Undefined for a log missing or moved aside (a new one starts).
 */
function readTail(options: LoadAgentLogsOptions, file: string, isRunLog = false): LogTail | undefined {
  const { logger } = options;
  const state = inspectLogFile(file);
  if (state.kind === "missing") return undefined;
  if (state.kind === "damaged") {
    if (!moveAsideDamaged(file, state.reason, logger)) options.blocked.add(file);
    return undefined;
  }
  let tail: LogTail;
  try {
    tail = readLogTail(file, options.count);
  } catch (error) {
    if (!moveAsideDamaged(file, errorReason(error), logger)) options.blocked.add(file);
    return undefined;
  }
  const kind = isRunLog ? "a run log" : "an event log";
  if (tail.truncatedBytes > 0) {
    logger.warn({ file, bytes: tail.truncatedBytes }, `cut a torn last line off ${kind} (crash mid-write)`);
  }
  if (tail.ended) logger.warn({ file }, `ended ${kind}'s last line, which had lost its newline`);
  return tail;
}

function write(options: LoadAgentLogsOptions, file: string, text: string): boolean {
  if (options.blocked.has(file)) return false;
  try {
    options.append(file, text);
    return true;
  } catch (error) {
    options.logger.error({ err: error, file }, "could not write repaired lines to an event log");
    return false;
  }
}

/**
 * The events of a log's tail that keep ids increasing: a line is kept when its id is below every
 * later line's (a line whose id jumped ahead of its neighbours, or a line written twice, is left
 * out), so the ring holds the longest run of the log's most recent order.
 */
function keepIncreasing(events: LoggedEvent[]): { kept: LoggedEvent[]; dropped: LoggedEvent[] } {
  const kept: LoggedEvent[] = [];
  const dropped: LoggedEvent[] = [];
  let below = Number.POSITIVE_INFINITY;
  for (let index = events.length - 1; index >= 0; index--) {
    const logged = events[index];
    if (!logged) continue;
    if (logged.event.id < below) {
      kept.push(logged);
      below = logged.event.id;
    } else dropped.push(logged);
  }
  return { kept: kept.reverse(), dropped: dropped.reverse() };
}

function isUsableName(dataDirectory: string, agent: string, run: string): boolean {
  try {
    agentEventsFile(dataDirectory, agent);
    runEventsFile(dataDirectory, run);
    return true;
  } catch {
    return false;
  }
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
