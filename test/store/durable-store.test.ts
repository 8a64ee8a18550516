import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Checkpoint } from "../../src/checkpoints/checkpoint.js";
import { ConfigSchema } from "../../src/config/config-schema.js";
import type { AgentEvent, EventDraft } from "../../src/events/agent-event.js";
import { EventBus } from "../../src/events/event-bus.js";
import { EventStore } from "../../src/events/event-store.js";
import { createLogger } from "../../src/logging/logger.js";
import type { DurableStore } from "../../src/store/durable-store.js";
import { openStore } from "../../src/store/open-store.js";
import { queuedRecord } from "../runs/queued-record.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import type { RunRecords } from "../../src/runs/run-records.js";
import { type PostgresServer, postgresMissingReason, startPostgres } from "../support/postgres-server.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });

/**
 * Where one test's store lives, opened again as often as the test likes (a restart): a fresh
 * data_dir for the files, a fresh database on the file's one PostgreSQL server.
 */
interface StorePlace {
  /** `now`: the store's clock (checkpoint times, cooldown expiry). */
  open(now?: () => Date): Promise<DurableStore>;
  /** A folder the event store may use for anything the log does not keep (nothing, normally). */
  dataDirectory: string;
}

interface Backend {
  name: "files" | "postgres";
  skip: string | undefined;
  place(): Promise<StorePlace>;
}

let postgres: PostgresServer | undefined;
let databases = 0;
const folders: string[] = [];

function temporaryFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "agentd-durable-store-"));
  folders.push(folder);
  return folder;
}

function placeFor(dataDirectory: string, store: Record<string, unknown>): StorePlace {
  const config = ConfigSchema.parse({ data_dir: dataDirectory, store });
  return { dataDirectory, open: (now) => openStore({ config, logger, ...(now ? { now } : {}) }) };
}

const backends: Backend[] = [
  {
    name: "files",
    skip: undefined,
    place: () => Promise.resolve(placeFor(temporaryFolder(), { backend: "files" })),
  },
  {
    name: "postgres",
    skip: postgresMissingReason(),
    place: async () => {
      postgres ??= await startPostgres();
      databases += 1;
      const url = await postgres.createDatabase(`suite_${databases}`);
      return placeFor(temporaryFolder(), { backend: "postgres", url });
    },
  },
];

afterAll(async () => {
  await postgres?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function thought(agent: string, text: string, run: string | null = "r_1"): EventDraft {
  return { agent, run, type: "thought", data: { text } };
}

/** The store's event bus (the database's ids with PostgreSQL) with the event store subscribed, as the daemon wires them. */
async function openEvents(store: DurableStore, dataDirectory: string) {
  const bus = store.createBus?.({ redact: (draft) => draft, now: () => new Date() }) ?? new EventBus();
  const events = await EventStore.open({ dataDirectory, bus, logger, log: store.events });
  await store.start();
  /** Publishes and resolves once the event store has every one of them (written, ids given). */
  const publish = async (...drafts: EventDraft[]) => {
    const expected = new Map<string, number>();
    for (const draft of drafts)
      expected.set(draft.agent, (expected.get(draft.agent) ?? events.lastId(draft.agent)) + 1);
    for (const draft of drafts) bus.publish(draft);
    await store.committed?.();
    await waitFor(
      () => [...expected].every(([agent, id]) => events.lastId(agent) >= id),
      "the events in the event store",
    );
  };
  return { bus, events, publish };
}

function parsed(lines: { id: number; line: string }[]): Array<Pick<AgentEvent, "id" | "agent" | "run">> {
  return lines.map(({ line }) => {
    const event = JSON.parse(line) as AgentEvent;
    return { id: event.id, agent: event.agent, run: event.run };
  });
}

function checkpointState(round: number): Omit<Checkpoint, "run" | "saved_at"> {
  return {
    round,
    messages: [
      { role: "user", content: "the task" },
      { role: "assistant", content: `round ${round}` },
    ],
    usage: { prompt_tokens: round, completion_tokens: round, total_tokens: 2 * round },
    cost_usd: 0.01 * round,
    removed_tools: [],
    // As the LLM worker keeps them: a tool's name and its arguments, separated by \u0000.
    recent_calls: [`write_file\u0000{"path":"round-${round}.txt"}`],
  };
}

/** Every run the store lists, oldest first (the listing pages newest first). */
async function everyRun(runs: RunRecords): Promise<RunRecord[]> {
  return (await runs.list({ limit: 1_000 })).reverse();
}

/** The same behaviour through the DurableStore interface, whichever backend keeps it. */
describe.each(backends)("the $name store", { timeout: 60_000 }, (backend) => {
  const test = it.skipIf(backend.skip !== undefined);

  beforeAll(async () => {
    // Starting PostgreSQL counts once, not against the first test's time.
    if (backend.skip === undefined) await backend.place();
  }, 60_000);

  test("creates runs started together in order, lists them once written, and reads them back after a restart", async () => {
    const place = await backend.place();
    const store = await place.open();
    const ids = Array.from({ length: 200 }, (_, index) => `r_${index.toString(36).padStart(4, "0")}`);
    const created = ids.map((id) => store.runs.create(queuedRecord(id)));
    // Listed only once written: nothing reports a run a crash could lose.
    expect(store.runs.get(ids[0] ?? "")).toBeUndefined();
    await Promise.all(created);
    const listed = await everyRun(store.runs);
    expect(listed.map((record) => record.id)).toEqual(ids);
    expect(store.runs.lastOf("alpha")?.id).toBe(ids.at(-1));
    await store.close();
    const reopened = await place.open();
    expect(await everyRun(reopened.runs)).toEqual(listed);
    expect(reopened.runs.lastOf("alpha")?.id).toBe(ids.at(-1));
    await reopened.close();
  });

  test("keeps a run whose task and result hold a NUL character, and the runs written beside it", async () => {
    const place = await backend.place();
    const store = await place.open();
    const odd = { ...queuedRecord("r_0001"), task: "read a\u0000b" };
    await Promise.all([store.runs.create(odd), store.runs.create(queuedRecord("r_0002"))]);
    const ended = {
      ...odd,
      status: "completed" as const,
      started_at: "2026-01-01T00:00:01.000Z",
      ended_at: "2026-01-01T00:00:02.000Z",
      result: "a\u0000b, as read",
    };
    await Promise.all([store.runs.save(ended), store.runs.create(queuedRecord("r_0003"))]);
    await store.close();
    const reopened = await place.open();
    expect(reopened.runs.get("r_0001")).toEqual(ended);
    expect((await everyRun(reopened.runs)).map((record) => record.id)).toEqual([
      "r_0001",
      "r_0002",
      "r_0003",
    ]);
    await reopened.close();
  });

  test("updates records, keeps each agent's newest run, and counts unfinished and queued runs", async () => {
    const place = await backend.place();
    const store = await place.open();
    const older = queuedRecord("r_0001", "alpha", "2026-01-01T00:00:01.000Z");
    const newer = queuedRecord("r_0002", "alpha", "2026-01-01T00:00:02.000Z");
    const other = queuedRecord("r_0003", "beta", "2026-01-01T00:00:03.000Z");
    for (const record of [older, newer, other]) await store.runs.create(record);
    expect((await everyRun(store.runs)).map((record) => record.id)).toEqual(["r_0001", "r_0002", "r_0003"]);
    expect(store.runs.lastOf("alpha")?.id).toBe("r_0002");
    expect(store.runs.lastOf("beta")?.id).toBe("r_0003");
    expect(store.runs.lastOf("nobody")).toBeUndefined();
    expect(store.runs.unfinishedOf("alpha")).toEqual({ unfinished: 2, queued: 2 });
    expect(store.runs.queuedCount()).toBe(3);

    const running = { ...older, status: "running" as const, started_at: "2026-01-01T00:00:04.000Z" };
    await store.runs.save(running);
    // On PostgreSQL a record is served once its write has committed, never before (SPEC 8).
    await store.committed?.();
    expect(store.runs.get("r_0001")).toEqual(running);
    // An update never makes an older run the newest.
    expect(store.runs.lastOf("alpha")?.id).toBe("r_0002");
    expect(store.runs.unfinishedOf("alpha")).toEqual({ unfinished: 2, queued: 1 });
    expect(store.runs.queuedCount()).toBe(2);

    const ended = {
      ...newer,
      status: "completed" as const,
      started_at: "2026-01-01T00:00:05.000Z",
      ended_at: "2026-01-01T00:00:06.000Z",
      result: "done",
    };
    await store.runs.save(ended);
    await store.committed?.();
    expect(store.runs.unfinishedOf("alpha")).toEqual({ unfinished: 1, queued: 0 });
    expect(store.runs.unfinishedOf("beta")).toEqual({ unfinished: 1, queued: 1 });
    expect(store.runs.queuedCount()).toBe(1);
    await store.committed?.();
    await store.close();

    const reopened = await place.open();
    expect(reopened.runs.get("r_0001")).toEqual(running);
    expect(reopened.runs.get("r_0002")).toEqual(ended);
    expect(reopened.runs.lastOf("alpha")?.id).toBe("r_0002");
    expect(reopened.runs.unfinishedOf("alpha")).toEqual({ unfinished: 1, queued: 0 });
    expect(reopened.runs.queuedCount()).toBe(1);
    await reopened.close();
  });

  test("numbers each agent's events 1, 2, 3…, reads them after a cursor within a limit, and continues after a restart", async () => {
    const place = await backend.place();
    const store = await place.open();
    const { events, publish } = await openEvents(store, place.dataDirectory);
    await publish(
      thought("alpha", "one", "r_a"),
      thought("beta", "one", "r_b"),
      thought("alpha", "two", "r_a"),
      thought("alpha", "three", null),
      thought("beta", "two", "r_b"),
    );
    expect(events.lastId("alpha")).toBe(3);
    expect(events.lastId("beta")).toBe(2);

    const alpha = await store.events.history("alpha", 0, Number.POSITIVE_INFINITY);
    expect(parsed(alpha)).toEqual([
      { id: 1, agent: "alpha", run: "r_a" },
      { id: 2, agent: "alpha", run: "r_a" },
      { id: 3, agent: "alpha", run: null },
    ]);
    expect(alpha.map((line) => line.id)).toEqual([1, 2, 3]);
    expect((await store.events.history("alpha", 1, 1)).map((line) => line.id)).toEqual([2]);
    expect((await store.events.history("alpha", 1, 10)).map((line) => line.id)).toEqual([2, 3]);
    expect(await store.events.history("alpha", 3, 10)).toEqual([]);
    expect(await store.events.history("nobody", 0, 10)).toEqual([]);
    expect((await store.events.runEvents("r_a", 0)).map((line) => line.id)).toEqual([1, 2]);
    expect((await store.events.runEvents("r_a", 1)).map((line) => line.id)).toEqual([2]);
    expect((await store.events.runEvents("r_b", 0)).map((line) => line.id)).toEqual([1, 2]);
    // The poll serves the same events from memory.
    expect(events.poll("alpha", { after: 1, limit: 1 }).events.map((event) => event.id)).toEqual([2]);
    events.close();
    await store.close();

    const reopened = await place.open();
    const loaded = await reopened.events.load(2);
    const tails = new Map(loaded.map((log) => [log.agent, log]));
    expect(tails.get("alpha")?.lastId).toBe(3);
    expect(tails.get("alpha")?.events.map((event) => event.id)).toEqual([2, 3]);
    expect(tails.get("beta")?.lastId).toBe(2);
    const again = await openEvents(reopened, place.dataDirectory);
    await again.publish(thought("alpha", "four", "r_a"), thought("gamma", "one", "r_c"));
    expect(again.events.lastId("alpha")).toBe(4);
    expect(again.events.lastId("gamma")).toBe(1);
    const after = await reopened.events.history("alpha", 0, Number.POSITIVE_INFINITY);
    expect(after.map((line) => line.id)).toEqual([1, 2, 3, 4]);
    again.events.close();
    await reopened.close();
  });

  test("keeps each agent's last fire and how far fires are accounted for across a restart", async () => {
    const place = await backend.place();
    const store = await place.open();
    expect(store.schedules.get("alpha")).toBeUndefined();
    expect(store.schedules.accountedUntil("alpha")).toBeUndefined();
    const alpha = { checked_at: "2026-01-01T00:00:00.000Z", last_fire: "2026-01-01T00:05:00.000Z" };
    const beta = { checked_at: "2026-01-01T00:10:00.000Z" };
    const gamma = { checked_at: "2026-01-01T00:00:00.000Z" };
    store.schedules.set("alpha", alpha);
    store.schedules.set("beta", beta);
    store.schedules.set("gamma", gamma);
    // Accounted until the later of the check and the last fire.
    expect(store.schedules.accountedUntil("alpha")?.toISOString()).toBe(alpha.last_fire);
    expect(store.schedules.accountedUntil("beta")?.toISOString()).toBe(beta.checked_at);
    store.schedules.flush();
    store.schedules.delete("gamma");
    const fired = { ...beta, last_fire: "2026-01-01T00:11:00.000Z" };
    store.schedules.set("beta", fired);
    store.schedules.flush();
    expect(await store.schedules.claimFire("alpha", "2026-01-01T00:06:00.000Z")).toBe(true);
    await store.committed?.();
    await store.close();

    const reopened = await place.open();
    expect(reopened.schedules.get("alpha")).toEqual(alpha);
    expect(reopened.schedules.get("beta")).toEqual(fired);
    expect(reopened.schedules.get("gamma")).toBeUndefined();
    expect(reopened.schedules.accountedUntil("beta")?.toISOString()).toBe(fired.last_fire);
    await reopened.close();
  });

  test("saves a run's checkpoints, hands the one to resume from, and deletes them", async () => {
    const place = await backend.place();
    const store = await place.open();
    expect(store.checkpoints.load("r_1")).toBeUndefined();
    await store.checkpoints.forRun("r_1").save(checkpointState(1));
    await store.checkpoints.forRun("r_1").save(checkpointState(2));
    await store.checkpoints.forRun("r_2").save(checkpointState(1));
    const latest = store.checkpoints.load("r_1");
    expect(latest).toMatchObject({ run: "r_1", ...checkpointState(2) });
    expect(Number.isNaN(Date.parse(latest?.saved_at ?? ""))).toBe(false);
    const resumed = store.checkpoints.forRun("r_1", latest);
    expect(resumed.resumeFrom).toEqual(latest);
    await resumed.save(checkpointState(3));
    expect(store.checkpoints.load("r_1")?.round).toBe(3);
    // Deleting may finish in the background (files): the checkpoint is gone once it has.
    store.checkpoints.remove("r_2");
    await waitFor(() => store.checkpoints.load("r_2") === undefined, "the checkpoint deleted");
    expect(store.checkpoints.load("r_1")?.round).toBe(3);
    await store.committed?.();
    await store.close();
  });

  test("rests a CLI tool until its cooldown's end, also after a restart", async () => {
    const place = await backend.place();
    let clock = new Date("2026-05-01T10:00:00Z");
    const now = () => clock;
    const store = await place.open(now);
    await store.start();
    expect(store.cooldowns.active("claude")).toBeUndefined();
    const cooldown = {
      tool: "claude",
      until: new Date("2026-05-01T10:10:00Z"),
      kind: "quota" as const,
      message: "usage limit reached",
    };
    store.cooldowns.start(cooldown);
    expect(store.cooldowns.active("claude")).toEqual(cooldown);
    expect(store.cooldowns.active("codex")).toBeUndefined();
    await store.committed?.();
    await store.close();

    const reopened = await place.open(now);
    expect(reopened.cooldowns.active("claude")).toEqual(cooldown);
    clock = new Date("2026-05-01T10:10:01Z");
    expect(reopened.cooldowns.active("claude")).toBeUndefined();
    await reopened.close();
  });

  test("finds a checkpoint left before a restart, and none once deleted", async () => {
    const place = await backend.place();
    const store = await place.open();
    await store.checkpoints.forRun("r_kept").save(checkpointState(4));
    await store.checkpoints.forRun("r_gone").save(checkpointState(1));
    store.checkpoints.remove("r_gone");
    await waitFor(() => store.checkpoints.load("r_gone") === undefined, "the checkpoint deleted");
    await store.committed?.();
    await store.close();
    const reopened = await place.open();
    try {
      expect(reopened.checkpoints.load("r_kept")).toMatchObject({ run: "r_kept", round: 4 });
      expect(reopened.checkpoints.load("r_gone")).toBeUndefined();
    } finally {
      await reopened.close();
    }
  });
});
