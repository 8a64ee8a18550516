import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventDraft } from "../../src/events/agent-event.js";
import { EventStore } from "../../src/events/event-store.js";
import { createLogger } from "../../src/logging/logger.js";
import type { RetentionPolicy } from "../../src/config/retention-policy.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { Clock } from "../../src/clock/clock.js";
import { loadSnapshot, RECENT_RUNS_HELD } from "../../src/store/postgres/load-snapshot.js";
import { type PostgresStore, openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { queuedRecord } from "../runs/queued-record.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });
const skip = postgresMissingReason();
const AGENTS = ["alpha", "beta", "gamma", "delta", "epsilon"];
const BASE_TIME = Date.parse("2026-01-01T00:00:00.000Z");

let postgres: PostgresServer | undefined;
let databases = 0;
const folders: string[] = [];

afterAll(async () => {
  await postgres?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A fresh database; `open` opens the store on it (again, for a restart) with these options. */
async function freshDatabase(): Promise<string> {
  postgres ??= await startPostgres();
  databases += 1;
  return postgres.createDatabase(`history_${databases}`);
}

interface OpenOptions {
  bufferSize?: number;
  retention?: (agentId: string) => RetentionPolicy;
  clock?: Clock;
}

function open(url: string, options: OpenOptions = {}): Promise<PostgresStore> {
  return openPostgresStore({
    url,
    leaseMilliseconds: 30_000,
    bufferSize: options.bufferSize ?? 200,
    logger,
    // Nothing pruned unless the test says so.
    retention: options.retention ?? (() => ({ days: null, runsPerAgent: null })),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

function runId(index: number): string {
  return `r_${index.toString(36).padStart(6, "0")}`;
}

/** Run `index` of the history: of agent AGENTS[index % 5], created `index` seconds after BASE_TIME. */
function finishedRecord(index: number, agent = AGENTS[index % AGENTS.length] ?? "alpha"): RunRecord {
  const createdAt = new Date(BASE_TIME + index * 1_000).toISOString();
  return {
    ...queuedRecord(runId(index), agent, createdAt),
    status: index % 7 === 0 ? "failed" : "completed",
    started_at: createdAt,
    ended_at: createdAt,
    result: `result of run ${index}`,
  };
}

/** Writes runs through the store's writer, as a daemon does, and waits until they are committed. */
async function writeHistory(store: PostgresStore, records: RunRecord[]): Promise<void> {
  for (const record of records) store.runs.save(record);
  await store.committed();
}

/** The store's bus and event store, wired as the daemon wires them. */
async function openEvents(store: PostgresStore) {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-pg-history-"));
  folders.push(folder);
  const bus = store.createBus({ redact: (draft) => draft, now: () => new Date() });
  const events = await EventStore.open({ dataDirectory: folder, bus, logger, log: store.events });
  await store.start();
  const publish = async (...drafts: EventDraft[]) => {
    const target = events.lastId("alpha") + drafts.filter((draft) => draft.agent === "alpha").length;
    for (const draft of drafts) bus.publish(draft);
    await store.committed();
    await waitFor(() => events.lastId("alpha") >= target, "the events in the event store");
  };
  return { events, publish };
}

function thought(run: string, text: string): EventDraft {
  return { agent: "alpha", run, type: "thought", data: { text } };
}

describe.skipIf(skip !== undefined)("the PostgreSQL store's history", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    postgres ??= await startPostgres();
  }, 60_000);

  it("starts on 5,000 finished runs reading only the unfinished, the newest of each agent and a recent few", async () => {
    const url = await freshDatabase();
    const store = await open(url);
    const history = Array.from({ length: 5_000 }, (_, index) => finishedRecord(index));
    await writeHistory(store, history);
    // Unfinished runs of the oldest times: only their status brings them back.
    const waiting = {
      ...queuedRecord(runId(9_001), "alpha", "2025-06-01T00:00:00.000Z"),
      status: "waiting" as const,
    };
    const queued = queuedRecord(runId(9_002), "beta", "2025-06-01T00:00:01.000Z");
    const newestOfZeta = finishedRecord(9_003, "zeta");
    await store.runs.create(queued);
    await writeHistory(store, [waiting, { ...newestOfZeta, created_at: "2025-01-01T00:00:00.000Z" }]);
    await store.close();

    // What the load returns, row by row, through a client it is handed.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    let rowsRead = 0;
    const counting = {
      connect: async () => {
        const client = await pool.connect();
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
        Object.assign(client, {
          query: async (...args: unknown[]) => {
            const result = await query(...args);
            rowsRead += result.rows.length;
            return result;
          },
        });
        return client;
      },
    };
    const snapshot = await loadSnapshot(counting, 0);
    await pool.end();
    const heldBound = RECENT_RUNS_HELD + AGENTS.length + 1 + 2;
    expect(snapshot.runs.length).toBeLessThanOrEqual(heldBound);
    expect(rowsRead).toBeLessThan(heldBound + 20);

    const restarted = await open(url);
    expect(
      restarted.runs
        .unfinished()
        .map((record) => [record.id, record.status])
        .sort(),
    ).toEqual([
      [runId(9_001), "waiting"],
      [runId(9_002), "queued"],
    ]);
    for (const [position, agent] of AGENTS.entries()) {
      // The last of the 5,000 of each agent: 4995 + position.
      expect(restarted.runs.lastOf(agent)).toEqual(history[4_995 + position]);
    }
    expect(restarted.runs.lastOf("zeta")?.id).toBe(newestOfZeta.id);
    expect(restarted.runs.unfinishedOf("alpha")).toEqual({ unfinished: 1, queued: 0 });
    expect(restarted.runs.queuedCount()).toBe(1);
    expect(restarted.runs.held).toBeLessThanOrEqual(heldBound);
    // An old run is not held, and is read back on demand.
    expect(restarted.runs.get(runId(10))).toBeUndefined();
    expect(await restarted.runs.find(runId(10))).toEqual(history[10]);
    expect(await restarted.runs.find("r_nosuchrun")).toBeUndefined();
    await restarted.close();
  });

  it("pages the whole history newest first, by agent and status, from a run to the next page", async () => {
    const url = await freshDatabase();
    const store = await open(url);
    const history = Array.from({ length: 2_500 }, (_, index) => finishedRecord(index));
    await writeHistory(store, history);
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await store.runs.list({ limit: 300, ...(before === undefined ? {} : { before }) });
      if (page.length === 0) break;
      seen.push(...page.map((record) => record.id));
      before = page.at(-1)?.id;
    }
    expect(seen).toEqual(history.map((record) => record.id).reverse());

    const betaFailed = await store.runs.list({ limit: 10, agent: "beta", status: "failed" });
    const expected = history
      .filter((record) => record.agent === "beta" && record.status === "failed")
      .reverse()
      .slice(0, 10);
    expect(betaFailed).toEqual(expected);
    const older = await store.runs.list({ limit: 3, agent: "beta", before: expected[9]?.id });
    expect(older.every((record) => record.agent === "beta" && record.id < (expected[9]?.id ?? ""))).toBe(
      true,
    );
    expect(older).toHaveLength(3);
    const since = await store.runs.list({ limit: 10_000, since: new Date(BASE_TIME + 2_490_000) });
    expect(since.map((record) => record.id)).toEqual(
      history
        .slice(2_490)
        .map((record) => record.id)
        .reverse(),
    );
    await expect(store.runs.list({ limit: 10, before: "r_nosuchrun" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // A cursor run pruned since: the page goes on from the time its id carries.
    const prunedCursor = `r_${(BASE_TIME + 10_500).toString(36).padStart(9, "0")}0000abcdefgh`;
    expect((await store.runs.list({ limit: 100, before: prunedCursor })).map((record) => record.id)).toEqual(
      history
        .slice(0, 11)
        .map((record) => record.id)
        .reverse(),
    );
    await store.close();
  });

  it("prunes finished runs past the newest N with their events while a client polls, and reports the pruned range as missed", async () => {
    const url = await freshDatabase();
    const retention = () => ({ days: null, runsPerAgent: 10 });
    const store = await open(url, { bufferSize: 20, retention });
    const { events, publish } = await openEvents(store);
    const received: number[] = [];
    let missed = 0;
    let writing = true;
    const poller = (async () => {
      let after = 0;
      while (writing || after < events.lastId("alpha")) {
        const page = events.pollLines("alpha", { after, limit: 7 });
        for (const id of page.ids) expect(id).toBeGreaterThan(after);
        received.push(...page.ids);
        missed += page.missed;
        // What was missed lies before the page: the next cursor goes past it.
        if (page.ids.length > 0) expect(page.ids[0]).toBe(after + page.missed + 1);
        after = page.ids.length > 0 ? page.next : after + page.missed;
        if (page.ids.length === 0) await events.wait("alpha", after, 50);
      }
    })();
    let pruned = 0;
    for (let index = 0; index < 60; index++) {
      const record = finishedRecord(index, "alpha");
      await store.runs.create({ ...record, status: "running", ended_at: undefined } as RunRecord);
      await publish(thought(record.id, "one"), thought(record.id, "two"));
      store.runs.save(record);
      await publish(thought(record.id, "three"));
      if (index % 10 === 9) pruned += (await store.pruneHistory()).runs;
    }
    writing = false;
    await poller;
    const lastId = events.lastId("alpha");
    expect(lastId).toBe(180);
    expect(pruned).toBe(50);
    // Every id is accounted for once: received, or reported missed.
    expect(new Set(received).size).toBe(received.length);
    expect(received.length + missed).toBe(lastId);
    expect(received).toEqual([...received].sort((left, right) => left - right));

    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const kept = await check.query<{ id: string }>("SELECT id FROM agentd_runs ORDER BY id");
    expect(kept.rows.map((row) => row.id)).toEqual(
      Array.from({ length: 10 }, (_, index) => runId(50 + index)),
    );
    const orphans = await check.query(
      "SELECT 1 FROM agentd_events WHERE run IS NOT NULL AND run NOT IN (SELECT id FROM agentd_runs)",
    );
    expect(orphans.rowCount).toBe(0);
    await check.end();
    expect(store.runs.get(runId(0))).toBeUndefined();
    await store.close();

    // After a restart the tail comes from the database: a cursor in the pruned range is told what
    // it missed and goes on, and ids continue where they were (never reused).
    const restarted = await open(url, { bufferSize: 20, retention });
    const again = await openEvents(restarted);
    const fromPruned = again.events.pollLines("alpha", { after: 5, limit: 1_000 });
    expect(fromPruned.oldest).toBe(161);
    expect(fromPruned.missed).toBe(155);
    expect(fromPruned.ids).toEqual(Array.from({ length: 20 }, (_, index) => 161 + index));
    const replay = await again.events.history("alpha", 5, 1_000);
    expect(replay[0]?.id).toBe(151);
    expect(replay.map(({ line }) => (JSON.parse(line) as { run: string }).run)).not.toContain(runId(49));
    // (Of no run: a run of the node before the restart is no longer this node's to write events for.)
    await again.publish({ agent: "alpha", run: null, type: "thought", data: { text: "after the restart" } });
    expect(again.events.lastId("alpha")).toBe(181);
    await restarted.close();
  });

  it("prunes by age at start and on its timer, never an unfinished run, one node at a time", async () => {
    const url = await freshDatabase();
    const now = BASE_TIME + 100 * 86_400_000;
    const timers: Array<{ callback: () => void; delay: number }> = [];
    const clock: Clock = {
      now: () => now,
      setTimer: (callback, delay) => {
        const timer = { callback, delay };
        timers.push(timer);
        return () => {
          const at = timers.indexOf(timer);
          if (at >= 0) timers.splice(at, 1);
        };
      },
    };
    const store = await open(url);
    const old = Array.from({ length: 450 }, (_, index) => finishedRecord(index));
    const unfinished = { ...queuedRecord(runId(8_000), "alpha", new Date(BASE_TIME).toISOString()) };
    const recent = finishedRecord(8_001, "alpha");
    const recentRecord = { ...recent, created_at: new Date(now - 86_400_000).toISOString() };
    await store.runs.create(unfinished);
    await writeHistory(store, [...old, recentRecord]);
    await store.close();

    const pruning = await open(url, { retention: () => ({ days: 30, runsPerAgent: null }), clock });
    // Another node pruning: this one skips its pass rather than wait.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    await other.query("SELECT pg_advisory_lock(7412000003)");
    expect(await pruning.pruneHistory()).toMatchObject({ skipped: true, runs: 0 });
    await other.query("SELECT pg_advisory_unlock(7412000003)");

    // The store's one clock also times the cluster lease: the pruning pass is the 15-minute timer.
    const passes = () => timers.filter((timer) => timer.delay === 15 * 60_000);
    await pruning.start();
    await waitFor(() => passes().length === 1, "the first pass to end and arm the timer");
    const count = async () =>
      (await other.query<{ count: string }>("SELECT count(*)::text AS count FROM agentd_runs")).rows[0]
        ?.count;
    expect(await count()).toBe("2");
    expect((await pruning.runs.find(unfinished.id))?.status).toBe("queued");
    expect(await pruning.runs.find(recentRecord.id)).toEqual(recentRecord);

    await writeHistory(pruning, [finishedRecord(500), finishedRecord(501)]);
    expect(await count()).toBe("4");
    const pass = passes()[0];
    timers.splice(timers.indexOf(pass as (typeof timers)[number]), 1);
    pass?.callback();
    await waitFor(() => passes().length === 1, "the timer's pass to end and arm the next");
    expect(await count()).toBe("2");
    await other.end();
    await pruning.close();
    expect(passes()).toHaveLength(0);
  });
});
