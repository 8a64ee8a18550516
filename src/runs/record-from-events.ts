import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { agentLogSegments, agentsWithSegments } from "../events/agent-log-segments.js";
import { agentEventsDirectory, agentOfEventsFile, agentEventsFile } from "../events/event-paths.js";
import { salvageLine } from "../events/salvage-line.js";
import type { StoredEvent } from "../events/stored-event-schema.js";
import type { RunRecord } from "../run-vocabulary/run-record.js";
import { EMPTY_USAGE, RunReasonSchema, RunStatusSchema, isTerminal } from "../run-vocabulary/run-status.js";

/** Of a run log, the start and the end are read: where a run starts, and where it ends. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 1024 * 1024;

/** What a run's events cannot tell about it (its task, its definition), marked in the record. */
const UNKNOWN = "";

/**
 * A run's record as its events tell it, for a run whose record file was damaged or lost: its id,
 * agent and creation time from `base`, its status, times, usage, cost, result and error from its
 * `status`, `result` and `error` events (oldest first). Its task and definition hash are unknown
 * (empty); its trigger is `agent` for a sub-agent's run, `api` otherwise.
 */
export function recordFromEvents(
  base: { run: string; agent: string; created_at: string; parent_run?: string; idempotency_key?: string },
  events: readonly StoredEvent[],
  known?: RunRecord,
): RunRecord {
  let record: RunRecord = known ?? {
    id: base.run,
    agent: base.agent,
    task: UNKNOWN,
    status: "queued",
    trigger: base.parent_run === undefined ? { kind: "api" } : { kind: "agent", parent_run: base.parent_run },
    ...(base.parent_run === undefined ? {} : { parent_run: base.parent_run }),
    definition_hash: UNKNOWN,
    created_at: base.created_at,
    usage: EMPTY_USAGE,
    cost_usd: 0,
    ...(base.idempotency_key === undefined ? {} : { idempotency_key: base.idempotency_key }),
  };
  for (const event of events) {
    if (event.run !== base.run) continue;
    record = applyEvent(record, event);
  }
  return record;
}

function applyEvent(record: RunRecord, event: StoredEvent): RunRecord {
  const data = (event.data ?? {}) as Record<string, unknown>;
  if (event.type === "status") {
    const status = RunStatusSchema.safeParse(data.status);
    if (!status.success) return record;
    const reason = RunReasonSchema.safeParse(data.reason);
    const { reason: _reason, ...rest } = record;
    const next: RunRecord = {
      ...rest,
      status: status.data,
      ...(reason.success ? { reason: reason.data } : {}),
    };
    if (status.data === "running" && next.started_at === undefined) next.started_at = event.time;
    if (isTerminal(status.data)) {
      next.ended_at = event.time;
      if (isUsage(data.usage)) next.usage = data.usage;
      if (typeof data.cost_usd === "number") next.cost_usd = data.cost_usd;
    }
    if (next.parent_run === undefined && typeof data.parent_run === "string") {
      next.parent_run = data.parent_run;
      next.trigger = { kind: "agent", parent_run: data.parent_run };
    }
    return next;
  }
  if (event.type === "result" && typeof data.text === "string") {
    return {
      ...record,
      result: data.text,
      ...(isUsage(data.usage) ? { usage: data.usage } : {}),
      ...(typeof data.cost_usd === "number" ? { cost_usd: data.cost_usd } : {}),
      ...(typeof data.worker === "string" ? { worker: data.worker } : {}),
    };
  }
  if (event.type === "error" && typeof data.code === "string" && typeof data.message === "string") {
    return { ...record, error: { code: data.code, message: data.message } };
  }
  return record;
}

function isUsage(value: unknown): value is RunRecord["usage"] {
  if (typeof value !== "object" || value === null) return false;
  const usage = value as Record<string, unknown>;
  return (
    typeof usage.prompt_tokens === "number" &&
    typeof usage.completion_tokens === "number" &&
    typeof usage.total_tokens === "number"
  );
}

/**
 * The events of a run log (`runs/<run>.events.jsonl`) that tell its record: its first 64 KB and
 * its last 1 MB (a run of a million lines is not read whole). Nothing when it is missing or is
 * not a regular file (never followed through a symbolic link).
 */
export function readRunLogEnds(file: string, window = { head: HEAD_BYTES, tail: TAIL_BYTES }): StoredEvent[] {
  const stats = lstatSync(file, { throwIfNoEntry: false });
  if (!stats?.isFile()) return [];
  let descriptor: number;
  try {
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const size = fstatSync(descriptor).size;
    if (size <= window.head + window.tail) return eventsOf(readAt(descriptor, 0, size));
    const head = readAt(descriptor, 0, window.head);
    const tail = readAt(descriptor, size - window.tail, window.tail);
    // A line cut by either window is dropped (the head's last, the tail's first).
    return [
      ...eventsOf(head.slice(0, head.lastIndexOf("\n"))),
      ...eventsOf(tail.slice(tail.indexOf("\n") + 1)),
    ];
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Every run the agent logs of `data_dir` tell of (`events/<agent>.jsonl` and its closed segments),
 * each as `recordFromEvents` makes it, oldest first: the repair of a lost `runs/` folder. Reads
 * every agent log through once, a chunk at a time, keeping one record per run (never the events):
 * a repair, never the ordinary start, and bounded in memory however long the logs are.
 */
export function recordsFromAgentLogs(dataDirectory: string): RunRecord[] {
  const directory = agentEventsDirectory(dataDirectory);
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  const records = new Map<string, RunRecord>();
  const agents = new Set([
    ...names.flatMap((name) => agentOfEventsFile(name) ?? []),
    ...agentsWithSegments(dataDirectory),
  ]);
  for (const agent of agents) {
    const files = [
      ...agentLogSegments(dataDirectory, agent).map((segment) => segment.file),
      agentEventsFile(dataDirectory, agent),
    ];
    for (const file of files) {
      forEachLoggedEvent(file, (event) => {
        if (event.run === null || event.agent !== agent || !/^r_[0-9a-z]+$/.test(event.run)) return;
        const known = records.get(event.run);
        records.set(
          event.run,
          recordFromEvents({ run: event.run, agent, created_at: event.time }, [event], known),
        );
      });
    }
  }
  return [...records.values()];
}

/** Bytes read from a log at a time; a line longer than LONGEST_LINE_BYTES is skipped as torn. */
const CHUNK_BYTES = 1_048_576;
const LONGEST_LINE_BYTES = 16 * CHUNK_BYTES;

/** Calls `visit` with each event of a log file in order, reading it a chunk at a time. */
function forEachLoggedEvent(file: string, visit: (event: StoredEvent) => void): void {
  const stats = lstatSync(file, { throwIfNoEntry: false });
  if (!stats?.isFile()) return;
  let descriptor: number;
  try {
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return;
  }
  const visitLine = (line: string) => {
    for (const { event } of salvageLine(line).events) visit(event);
  };
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    // The bytes after the last newline read so far: a line's start, decoded once it is whole.
    let pending = Buffer.alloc(0);
    let position = 0;
    for (;;) {
      const read = readSync(descriptor, buffer, 0, CHUNK_BYTES, position);
      if (read === 0) break;
      position += read;
      const lastNewline = buffer.lastIndexOf(0x0a, read - 1);
      if (lastNewline < 0) {
        pending =
          pending.length > LONGEST_LINE_BYTES
            ? Buffer.alloc(0)
            : Buffer.concat([pending, buffer.subarray(0, read)]);
        continue;
      }
      const whole = Buffer.concat([pending, buffer.subarray(0, lastNewline)]).toString("utf8");
      for (const line of whole.split("\n")) visitLine(line);
      pending = Buffer.from(buffer.subarray(lastNewline + 1, read));
    }
    if (pending.length > 0) visitLine(pending.toString("utf8"));
  } finally {
    closeSync(descriptor);
  }
}

function readAt(descriptor: number, position: number, length: number): string {
  const buffer = Buffer.alloc(length);
  const read = readSync(descriptor, buffer, 0, length, position);
  return buffer.toString("utf8", 0, read);
}

function eventsOf(text: string): StoredEvent[] {
  return text.split("\n").flatMap((line) => salvageLine(line).events.map(({ event }) => event));
}
