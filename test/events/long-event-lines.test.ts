import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { EventStore } from "../../src/events/event-store.js";
import { FileEventLog } from "../../src/events/file-event-log.js";
import { createLogger } from "../../src/logging/logger.js";

const logger = createLogger({ level: "silent", pretty: false });
/** Lines longer than this are kept on disk only in these tests. */
const LARGE = 1_000;

function thought(agent: string, text: string): EventDraft {
  return { agent, run: "r_1", type: "thought", data: { text } };
}

/** Every line of the agent's log on disk, by id: its closed segments and its current file. */
function linesOnDisk(dataDirectory: string, agent: string): Map<number, string> {
  const events = path.join(dataDirectory, "events");
  const segments = path.join(events, "segments", agent);
  const files = [
    ...(readdirSync(events, { withFileTypes: true }).some((entry) => entry.name === "segments")
      ? readdirSync(segments)
          .sort()
          .map((name) => path.join(segments, name))
      : []),
    path.join(events, `${agent}.jsonl`),
  ];
  const byId = new Map<number, string>();
  for (const file of files) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line !== "") byId.set((JSON.parse(line) as { id: number }).id, line);
    }
  }
  return byId;
}

describe("EventStore with lines longer than the ring keeps", () => {
  let dataDirectory: string;

  beforeEach(() => {
    dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-long-lines-"));
  });
  afterEach(() => rmSync(dataDirectory, { recursive: true, force: true }));

  async function openStore(bufferSize: number, segmentBytes = 8 * 1024 * 1024) {
    const bus = new EventBus();
    const store = await EventStore.open({
      dataDirectory,
      bufferSize,
      largeLineChars: LARGE,
      bus,
      logger,
      log: new FileEventLog({ dataDirectory, logger, segmentBytes }),
    });
    return { bus, store };
  }

  it("keeps long lines on disk only and serves them whole, across segments and a restart", async () => {
    // Small segments: most long lines are in closed segments (moved since they were written).
    const first = await openStore(10, 8_000);
    for (let index = 1; index <= 30; index++) {
      const text = index % 3 === 0 ? `short ${index}` : `${index}:`.padEnd(3_000 + index, "x");
      first.bus.publish(thought("writer", text));
    }
    const onDisk = linesOnDisk(dataDirectory, "writer");
    const expected = [...onDisk.entries()].filter(([id]) => id > 20).map(([, line]) => line);
    // Only the short ones are held: 10 events, of which 3 short.
    expect(first.store.retainedChars()).toBe(
      expected.filter((line) => line.length <= LARGE).reduce((sum, line) => sum + line.length, 0),
    );
    expect(first.store.pollLines("writer", { after: 20 }).whole).toBe(false);
    expect(() => first.store.poll("writer", { after: 20 })).toThrow(/kept on disk/);
    const page = await first.store.readPollLines("writer", { after: 20 });
    expect(page).toMatchObject({ whole: true, next: 30, oldest: 21, missed: 0 });
    expect(page.lines).toEqual(expected);
    expect((await first.store.mergedLines(undefined, 100)).lines).toEqual(expected);
    first.store.close();

    // The restart rebuilds the ring from the logs' ends (the current file, then as many closed
    // segments as its 10 events take: 2 or 3 long events each), long lines as stand-ins again.
    const second = await openStore(10, 8_000);
    const rebuilt = await second.store.readPollLines("writer");
    expect(rebuilt.ids).toEqual([21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
    expect(rebuilt.lines).toEqual(rebuilt.ids.map((id) => onDisk.get(id)));
    expect(second.store.retainedChars()).toBe(
      rebuilt.lines.filter((line) => line.length <= LARGE).reduce((sum, line) => sum + line.length, 0),
    );
    expect((await second.store.mergedLines(undefined, 100)).lines).toEqual(rebuilt.lines);
    second.store.close();
  });

  it("serves short lines from memory as before", async () => {
    const { bus, store } = await openStore(10);
    bus.publish(thought("writer", "short"));
    const page = store.pollLines("writer");
    expect(page.whole).toBe(true);
    expect(page.lines).toEqual([...linesOnDisk(dataDirectory, "writer").values()]);
    store.close();
  });

  it("leaves out a long line whose segment was deleted, and counts it missed", async () => {
    const { bus, store } = await openStore(10, 4_000);
    bus.publish(thought("writer", "x".repeat(5_000)));
    bus.publish(thought("writer", "short after"));
    // Event 1 closed a segment of its own; retention deletes it.
    const segments = path.join(dataDirectory, "events", "segments", "writer");
    expect(readdirSync(segments)).toEqual(["000000000001.jsonl"]);
    rmSync(path.join(segments, "000000000001.jsonl"));
    const page = await store.readPollLines("writer");
    expect(page).toMatchObject({ ids: [2], next: 2, oldest: 1, missed: 1 });
    expect(page.lines.map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([2]);
    const merged = await store.mergedLines(undefined, 10);
    expect(merged.missed).toBe(1);
    expect(merged.lines).toEqual(page.lines);
    store.close();
  });
});
