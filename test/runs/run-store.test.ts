import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { RunStore } from "../../src/runs/run-store.js";
import { queuedRecord } from "./queued-record.js";

/** A logger whose warnings the test reads. */
function recordingLogger() {
  const lines: Array<{ msg: string; level: number } & Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = createLogger({ level: "debug", pretty: false, destination });
  return { logger, warnings: () => lines.filter((line) => line.level >= 40).map((line) => line.msg) };
}

const silent = createLogger({ level: "silent", pretty: false });

function place(): string {
  return mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
}

function ended(record: RunRecord, status: "completed" | "failed" = "completed"): RunRecord {
  return { ...record, status, started_at: record.created_at, ended_at: record.created_at };
}

/** `count` runs of `agents` in turn, created and finished one after the other. */
async function history(store: RunStore, count: number, agents = ["alpha"]): Promise<RunRecord[]> {
  const records: RunRecord[] = [];
  for (let index = 0; index < count; index++) {
    const time = new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString();
    const record = queuedRecord(
      `r_${index.toString(36).padStart(6, "0")}`,
      agents[index % agents.length],
      time,
    );
    await store.create(record);
    await store.save(ended(record));
    records.push(ended(record));
  }
  return records;
}

const ids = (records: RunRecord[]) => records.map((record) => record.id);

describe("RunStore", () => {
  // Creating, listing and reading back after a restart: test/store/durable-store.test.ts, for both stores.
  it("keeps a queued run in the open-runs journal alone, and reads it back after a restart", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent });
    await store.create(queuedRecord("r_queued"));
    // A queued run has no record file yet: its journal line is enough for a restart.
    expect(existsSync(path.join(store.directory, "r_queued.json"))).toBe(false);
    store.close();
    const reopened = RunStore.open({ dataDirectory, logger: silent });
    expect(reopened.get("r_queued")).toEqual(store.get("r_queued"));
    expect(ids(reopened.unfinished())).toEqual(["r_queued"]);
  });

  it("records a launch in the journal, its next change in the record file, and a restart finds each", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent });
    const queued = queuedRecord("r_launched");
    await store.create(queued);
    const running: RunRecord = { ...queued, status: "running", started_at: queued.created_at };
    await store.save(running);
    // On disk as a journal line (one write for every launch of a turn): what a kill -9 before its
    // record file lands leaves, and a restart finds it running (then ends it as crashed).
    const journalOnly = place();
    cpSync(dataDirectory, journalOnly, { recursive: true });
    rmSync(path.join(journalOnly, "runs", "r_launched.json"), { force: true });
    expect(store.get("r_launched")?.status).toBe("running");
    expect(RunStore.open({ dataDirectory: journalOnly, logger: silent }).get("r_launched")).toEqual(running);
    // The record file follows off the event loop.
    await store.settled();
    expect(JSON.parse(readFileSync(path.join(store.directory, "r_launched.json"), "utf8"))).toEqual(running);
    const paused: RunRecord = { ...running, status: "paused" };
    await store.save(paused);
    expect(JSON.parse(readFileSync(path.join(store.directory, "r_launched.json"), "utf8"))).toEqual(paused);
    await store.save(running);
    await store.save(ended(queued));
    store.close();
    const reopened = RunStore.open({ dataDirectory, logger: silent });
    expect(reopened.get("r_launched")?.status).toBe("completed");
    expect(reopened.unfinished()).toEqual([]);
  });

  it("writes a launch's record file once its first request is out, a change made meanwhile after it", async () => {
    const store = RunStore.open({ dataDirectory: place(), logger: silent });
    const queued = queuedRecord("r_sending");
    await store.create(queued);
    let requestOut = (): void => undefined;
    const firstRequestOut = new Promise<void>((resolve) => {
      requestOut = resolve;
    });
    const running: RunRecord = { ...queued, status: "running", started_at: queued.created_at };
    await store.save(running, { issueAfter: firstRequestOut });
    // On disk as its journal line, and served; its record file waits for the request.
    expect(store.get("r_sending")?.status).toBe("running");
    const file = path.join(store.directory, "r_sending.json");
    await new Promise((resolve) => setImmediate(resolve));
    expect(existsSync(file)).toBe(false);
    // A change made meanwhile lands after the launch's file: the file never goes back to `running`.
    const paused: RunRecord = { ...running, status: "paused" };
    const pausedSaved = store.save(paused);
    requestOut();
    await pausedSaved;
    await store.settled();
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(paused);
    expect(store.get("r_sending")).toEqual(paused);
    store.close();
  });

  it("pages newest first with limit and before, across index segments, by agent and status", async () => {
    const store = RunStore.open({ dataDirectory: place(), logger: silent, segmentBytes: 400 });
    const records = await history(store, 30, ["alpha", "beta"]);
    await store.save({ ...ended(records[4] as RunRecord, "failed") });
    expect(readdirSync(path.join(store.directory, "index")).length).toBeGreaterThan(3);
    const newestFirst = ids(records).reverse();
    const first = await store.list({ limit: 10 });
    expect(ids(first)).toEqual(newestFirst.slice(0, 10));
    const second = await store.list({ limit: 10, before: first.at(-1)?.id });
    expect(ids(second)).toEqual(newestFirst.slice(10, 20));
    expect(ids(await store.list({ limit: 100, before: second.at(-1)?.id }))).toEqual(newestFirst.slice(20));
    expect(ids(await store.list({ limit: 3, agent: "beta" }))).toEqual(["r_00000t", "r_00000r", "r_00000p"]);
    expect(ids(await store.list({ limit: 100, status: "failed" }))).toEqual(["r_000004"]);
    expect(ids(await store.list({ limit: 100, since: new Date(Date.UTC(2026, 0, 1, 0, 0, 27)) }))).toEqual(
      newestFirst.slice(0, 3),
    );
    await expect(store.list({ limit: 10, before: "r_nothere" })).rejects.toThrow(/no run "r_nothere"/);
  });

  it("lists the runs created since a time after the clock was set back, and stops past a run of older ones", async () => {
    const store = RunStore.open({ dataDirectory: place(), logger: silent, segmentBytes: 400 });
    const at = (hour: number, second: number) =>
      new Date(Date.UTC(2026, 0, 1, hour, 0, second)).toISOString();
    const created = async (id: string, time: string) => {
      const record = queuedRecord(id, "alpha", time);
      await store.create(record);
      await store.save(ended(record));
    };
    await created("r_000000", at(8, 0));
    // At 10:00 the clock is set back an hour: the runs after are created "before" the two above.
    await created("r_000001", at(10, 0));
    await created("r_000002", at(10, 1));
    for (let index = 0; index < 5; index++) await created(`r_00001${index}`, at(9, index));

    expect(ids(await store.list({ limit: 100, since: new Date(at(9, 30)) }))).toEqual([
      "r_000002",
      "r_000001",
    ]);
    expect(ids(await store.list({ limit: 100, since: new Date(at(9, 2)) }))).toEqual([
      "r_000014",
      "r_000013",
      "r_000012",
      "r_000002",
      "r_000001",
    ]);
  });

  it("lists every run again after a power cut zero-filled the tail of the segment just closed", async () => {
    // A segment is closed without an fsync: a power cut soon after a new one began can leave the
    // old one its size with its last lines read as NULs, as it does the newest segment's.
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent, segmentBytes: 400 });
    const records = await history(store, 7);
    await store.settled();
    store.close();
    const segments = readdirSync(path.join(store.directory, "index")).sort();
    expect(segments.length).toBeGreaterThanOrEqual(2);
    const closed = path.join(store.directory, "index", segments.at(-2) ?? "");
    const bytes = readFileSync(closed);
    bytes.fill(0, Math.floor(bytes.length / 2));
    writeFileSync(closed, bytes);

    const log = recordingLogger();
    const reopened = RunStore.open({ dataDirectory, logger: log.logger, segmentBytes: 400 });
    expect(ids(await reopened.list({ limit: 100 }))).toEqual(ids(records).reverse());
    expect(log.warnings()).toContainEqual(expect.stringMatching(/^rebuilt the run index .*unreadable line/));
    reopened.close();
  });

  it("pages the runs created since a time, ties at that very time included, each run once", async () => {
    const store = RunStore.open({ dataDirectory: place(), logger: silent, segmentBytes: 400 });
    const at = new Date(Date.UTC(2026, 0, 1, 9)).toISOString();
    const before = new Date(Date.UTC(2026, 0, 1, 8, 59, 59)).toISOString();
    for (const [id, time] of [
      ["r_000000", before],
      ["r_000001", at],
      ["r_000002", at],
      ["r_000003", at],
      ["r_000004", at],
      ["r_000005", at],
    ] as const) {
      const record = queuedRecord(id, "alpha", time);
      await store.create(record);
      await store.save(ended(record));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const runs = await store.list({ limit: 2, since: new Date(at), ...(cursor ? { before: cursor } : {}) });
      if (runs.length === 0) break;
      seen.push(...ids(runs));
      cursor = runs.at(-1)?.id;
    }
    expect(seen).toEqual(["r_000005", "r_000004", "r_000003", "r_000002", "r_000001"]);
    store.close();
  });

  it("reads no finished run's record at start: only the open runs and each agent's newest", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent });
    const records = await history(store, 20);
    const open = queuedRecord("r_zzzzzz", "alpha", "2026-02-01T00:00:00.000Z");
    await store.create(open);
    store.close();
    // Damage every finished record: a start that read them would warn.
    for (const record of records) writeFileSync(path.join(store.directory, `${record.id}.json`), "garbage{");
    const { logger, warnings } = recordingLogger();
    const reopened = RunStore.open({ dataDirectory, logger });
    expect(warnings()).toEqual([]);
    expect(ids(reopened.unfinished())).toEqual(["r_zzzzzz"]);
    expect(reopened.lastOf("alpha")?.id).toBe("r_zzzzzz");
    expect(reopened.queuedCount()).toBe(1);
  });

  it("rebuilds an emptied or a missing index from the run records, with a warning", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent });
    const records = await history(store, 5);
    await store.create(queuedRecord("r_zzzzzz", "alpha", "2026-02-01T00:00:00.000Z"));
    store.close();
    const indexDirectory = path.join(store.directory, "index");
    for (const name of readdirSync(indexDirectory)) writeFileSync(path.join(indexDirectory, name), "");
    const emptied = recordingLogger();
    const afterEmptied = RunStore.open({ dataDirectory, logger: emptied.logger });
    expect(emptied.warnings()).toContainEqual(
      expect.stringContaining("rebuilt the run index and the open runs from the run records"),
    );
    expect(ids(await afterEmptied.list({ limit: 100 }))).toEqual(["r_zzzzzz", ...ids(records).reverse()]);
    afterEmptied.close();

    rmSync(indexDirectory, { recursive: true });
    rmSync(path.join(store.directory, "open"), { recursive: true });
    const missing = recordingLogger();
    const afterMissing = RunStore.open({ dataDirectory, logger: missing.logger });
    expect(missing.warnings()).toContainEqual(
      expect.stringContaining("rebuilt the run index and the open runs from the run records"),
    );
    // The queued run lived in the journal alone: gone with it; every run with a record is back.
    expect(ids(await afterMissing.list({ limit: 100 }))).toEqual(ids(records).reverse());
  });

  it("skips a torn or garbled index line and keeps the rest", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent });
    await history(store, 2);
    store.close();
    const segment = path.join(store.directory, "index", "00000001.jsonl");
    appendFileSync(segment, '{"run":"r_torn","agent":"alp');
    const reopened = RunStore.open({ dataDirectory, logger: silent });
    await reopened.create(queuedRecord("r_after", "alpha", "2026-03-01T00:00:00.000Z"));
    writeFileSync(segment, readFileSync(segment, "utf8").replace('"r_000001"', '"r_000001", garbled'));
    expect(ids(await reopened.list({ limit: 10 }))).toEqual(["r_after", "r_000000"]);
    expect(readFileSync(segment, "utf8").endsWith("\n")).toBe(true);
  });

  it("migrates the old single-file index on first start", async () => {
    const dataDirectory = place();
    const runs = path.join(dataDirectory, "runs");
    const finished = ended(queuedRecord("r_000001", "alpha", "2026-01-01T00:00:01.000Z"));
    const queued = queuedRecord("r_000002", "beta", "2026-01-01T00:00:02.000Z");
    const running = {
      ...queuedRecord("r_000003", "alpha", "2026-01-01T00:00:03.000Z"),
      status: "running" as const,
    };
    const lines = [finished, queued, running].map((record) =>
      JSON.stringify({
        run: record.id,
        agent: record.agent,
        created_at: record.created_at,
        record: queuedRecord(record.id, record.agent, record.created_at),
      }),
    );
    RunStore.open({ dataDirectory, logger: silent }).close();
    rmSync(path.join(runs, "index"), { recursive: true });
    rmSync(path.join(runs, "open"), { recursive: true });
    writeFileSync(path.join(runs, "index.jsonl"), `${lines.join("\n")}\n`);
    writeFileSync(path.join(runs, "r_000001.json"), JSON.stringify(finished));
    writeFileSync(path.join(runs, "r_000003.json"), JSON.stringify(running));
    const { logger, warnings } = recordingLogger();
    const store = RunStore.open({ dataDirectory, logger });
    expect(warnings()).toContain("migrated the run index to runs/index/ and runs/open/");
    expect(existsSync(path.join(runs, "index.jsonl"))).toBe(false);
    expect(ids(await store.list({ limit: 10 }))).toEqual(["r_000003", "r_000002", "r_000001"]);
    expect(ids(store.unfinished())).toEqual(["r_000002", "r_000003"]);
    expect(store.get("r_000001")).toEqual(finished);
    store.close();
    const again = RunStore.open({ dataDirectory, logger: silent });
    expect(ids(again.unfinished())).toEqual(["r_000002", "r_000003"]);
    expect(again.lastOf("beta")?.id).toBe("r_000002");
  });

  it("prunes finished runs with their files and index lines, never an unfinished one", async () => {
    const dataDirectory = place();
    const store = RunStore.open({ dataDirectory, logger: silent, segmentBytes: 400 });
    const records = await history(store, 12);
    const open = queuedRecord("r_zzzzzz", "alpha", "2025-01-01T00:00:00.000Z");
    await store.create(open);
    writeFileSync(path.join(store.directory, `${records[0]?.id}.events.jsonl`), "{}\n");
    const pruned = await store.prune((_line, rank) => rank > 3);
    expect(pruned).toHaveLength(10);
    expect(existsSync(path.join(store.directory, `${records[0]?.id}.json`))).toBe(false);
    expect(existsSync(path.join(store.directory, `${records[0]?.id}.events.jsonl`))).toBe(false);
    expect(ids(await store.list({ limit: 100 }))).toEqual([open.id, ...ids(records.slice(-2)).reverse()]);
    store.close();
    const reopened = RunStore.open({ dataDirectory, logger: silent });
    expect(reopened.get(open.id)?.status).toBe("queued");
    expect(await reopened.list({ limit: 100 })).toHaveLength(3);
  });

  it("counts the writes accepted and not yet on disk", async () => {
    const store = RunStore.open({ dataDirectory: place(), logger: silent });
    expect(store.pendingWrites).toBe(0);
    const created = [store.create(queuedRecord("r_one")), store.create(queuedRecord("r_two"))];
    expect(store.pendingWrites).toBe(2);
    await Promise.all(created);
    const record = queuedRecord("r_one");
    const saved = store.save({ ...record, status: "running", started_at: new Date().toISOString() });
    expect(store.pendingWrites).toBeGreaterThanOrEqual(1);
    await saved;
    await store.settled();
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.pendingWrites).toBe(0);
  });
});
