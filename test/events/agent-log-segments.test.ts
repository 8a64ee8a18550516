import { existsSync, mkdtempSync, readdirSync, renameSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { agentSegmentsDirectory } from "../../src/events/event-paths.js";
import { FileEventLog } from "../../src/events/file-event-log.js";
import { createLogger } from "../../src/logging/logger.js";

const logger = createLogger({ level: "silent", pretty: false });

function event(id: number, time = "2026-01-01T00:00:00.000Z"): AgentEvent {
  return {
    id,
    agent: "alpha",
    run: null,
    time,
    type: "thought",
    data: { text: `event ${id}` },
  } as AgentEvent;
}

function write(log: FileEventLog, ids: number[]): void {
  for (const id of ids) {
    const value = event(id);
    log.append(value, JSON.stringify(value));
  }
}

describe("segmented agent logs", () => {
  it("closes the current segment past its size, reads history across segments and the tail after a restart", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-segments-"));
    const log = new FileEventLog({ dataDirectory, logger, segmentBytes: 600 });
    await log.load(10);
    write(
      log,
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    const segments = readdirSync(agentSegmentsDirectory(dataDirectory, "alpha"));
    expect(segments.length).toBeGreaterThan(2);
    const history = await log.history("alpha", 3, 100);
    expect(history.map((line) => line.id)).toEqual(Array.from({ length: 17 }, (_, index) => index + 4));
    expect((await log.history("alpha", 3, 5)).map((line) => line.id)).toEqual([4, 5, 6, 7, 8]);
    log.close();

    // A crash right after a segment was closed: the current file is not there; ids go on anyway.
    const current = path.join(dataDirectory, "events", "alpha.jsonl");
    if (existsSync(current)) renameSync(current, path.join(dataDirectory, "moved-aside.jsonl"));
    const reopened = new FileEventLog({ dataDirectory, logger, segmentBytes: 600 });
    const [loaded] = await reopened.load(4);
    expect(loaded?.lastId).toBeGreaterThan(10);
    expect(loaded?.events.map((tail) => tail.id)).toEqual(
      Array.from({ length: 4 }, (_, index) => (loaded?.lastId ?? 0) - 3 + index),
    );
  });

  it("deletes closed segments whose events are all older than days, never the current one", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-segments-"));
    const log = new FileEventLog({ dataDirectory, logger, segmentBytes: 600 });
    await log.load(10);
    write(
      log,
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    const directory = agentSegmentsDirectory(dataDirectory, "alpha");
    const [oldest, ...rest] = readdirSync(directory).sort();
    const longAgo = new Date("2025-01-01T00:00:00.000Z");
    utimesSync(path.join(directory, oldest ?? ""), longAgo, longAgo);
    expect(log.pruneSegments(() => 30, new Date("2025-01-15T00:00:00.000Z"))).toBe(0);
    expect(log.pruneSegments(() => 30, new Date())).toBe(1);
    expect(readdirSync(directory).sort()).toEqual(rest);
    expect(log.pruneSegments(() => null, new Date("2030-01-01T00:00:00.000Z"))).toBe(0);
    // The history starts at the oldest event kept.
    expect((await log.history("alpha", 0, 1))[0]?.id).toBeGreaterThan(1);
    expect(existsSync(path.join(dataDirectory, "events", "alpha.jsonl"))).toBe(true);
    log.close();
  });
});
