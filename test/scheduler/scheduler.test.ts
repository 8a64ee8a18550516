import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import type { AgentAvailability } from "../../src/runs/agent-availability.js";
import { RunManager } from "../../src/runs/run-manager.js";
import { RunStore } from "../../src/runs/run-store.js";
import { ScheduleState } from "../../src/scheduler/schedule-state.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { ControlledWorker } from "../runs/controlled-worker.js";
import { ManualClock } from "../support/manual-clock.js";
import { EventLog } from "../runs/event-waiter.js";
import { makeDefinition } from "../support/make-definition.js";

const logger = createLogger({ level: "silent", pretty: false });
const schedulers: Scheduler[] = [];

afterEach(() => {
  for (const scheduler of schedulers.splice(0)) scheduler.stop();
});

/** A Monday, 08:59:58.000 UTC. */
const START = Date.parse("2026-03-02T08:59:58.000Z");

function setup(
  definitions: AgentDefinition[],
  options: { dataDirectory?: string; clock?: ManualClock; queueLimit?: number } = {},
) {
  const clock = options.clock ?? new ManualClock(START);
  const dataDirectory = options.dataDirectory ?? mkdtempSync(path.join(tmpdir(), "agentd-scheduler-"));
  const bus = new EventBus();
  const log = new EventLog(bus);
  const worker = new ControlledWorker();
  const agents = new Map<string, AgentAvailability>();
  for (const definition of definitions) agents.set(definition.id, { state: "ready", definition });
  const runs = new RunManager({
    store: RunStore.open({ dataDirectory, logger }),
    events: bus,
    agents: (id) => agents.get(id),
    workerFor: worker.workerFor,
    concurrency: 4,
    shutdownSignal: new AbortController().signal,
    logger,
  });
  const stateFile = path.join(dataDirectory, "schedules.json");
  const scheduler = new Scheduler({
    runs,
    events: bus,
    state: ScheduleState.load(stateFile, logger),
    logger,
    clock,
    ...(options.queueLimit === undefined ? {} : { queueLimit: options.queueLimit }),
  });
  schedulers.push(scheduler);
  return { scheduler, runs, worker, log, agents, stateFile, dataDirectory, clock };
}

const HOUR = 3_600_000;

describe("Scheduler", () => {
  it("fires a seconds-level cron with the schedule's task and records the fire", async () => {
    const definition = makeDefinition({
      id: "ticker",
      frontmatter: { schedule: { cron: "* * * * * *", task: "tick" } },
    });
    const { scheduler, worker, stateFile, clock, runs } = setup([definition]);
    scheduler.apply([definition]);
    expect(scheduler.nextFire("ticker")?.getTime()).toBe(START + 1_000);
    clock.advanceTo(START + 1_000);
    const [context] = await worker.waitForStarted(1);
    expect(context?.task).toBe("tick");
    // The state is written once the fire's run launched (its first request out): not in its way.
    await vi.waitFor(() => {
      const state = JSON.parse(readFileSync(stateFile, "utf8"));
      expect(state.agents.ticker.last_fire).toBe(new Date(START + 1_000).toISOString());
    }, 10_000);
    expect(runs.get(context?.runId ?? "")?.trigger).toEqual({
      kind: "schedule",
      scheduled_for: new Date(START + 1_000).toISOString(),
    });
  });

  it("names the fire it was armed for when the timer lands on the exact millisecond, once each", async () => {
    const definition = makeDefinition({
      id: "exact",
      frontmatter: {
        schedule: { cron: "0 9 * * *", overlap: "queue" },
        task: "x",
      },
    });
    const { scheduler, worker, runs, clock } = setup([definition]);
    scheduler.apply([definition]);
    const nine = Date.parse("2026-03-02T09:00:00.000Z");
    expect(scheduler.nextFire("exact")?.getTime()).toBe(nine);
    // The boundary: the clock reads exactly 09:00:00.000 when the timer runs.
    clock.advanceTo(nine);
    await worker.waitForStarted(1);
    clock.advanceTo(nine + 1);
    expect((await runs.list({ agent: "exact" })).map((run) => run.trigger)).toEqual([
      { kind: "schedule", scheduled_for: "2026-03-02T09:00:00.000Z" },
    ]);
    expect(scheduler.nextFire("exact")?.toISOString()).toBe("2026-03-03T09:00:00.000Z");
    clock.advanceTo(Date.parse("2026-03-05T09:00:00.000Z"));
    // Each fire's run is listed once its record is written.
    await vi.waitFor(async () => expect(await runs.list({ agent: "exact" })).toHaveLength(4));
    expect(
      (await runs.list({ agent: "exact" }))
        .map((run) => "scheduled_for" in run.trigger && run.trigger.scheduled_for)
        .sort(),
    ).toEqual([
      "2026-03-02T09:00:00.000Z",
      "2026-03-03T09:00:00.000Z",
      "2026-03-04T09:00:00.000Z",
      "2026-03-05T09:00:00.000Z",
    ]);
  });

  it("keeps one timer for every schedule and writes schedules.json once at start", () => {
    const definitions = Array.from({ length: 50 }, (_, index) =>
      makeDefinition({
        id: `agent-${index}`,
        frontmatter: { schedule: { cron: `${index % 60} * * * *` }, task: "x" },
      }),
    );
    const { scheduler, clock, stateFile } = setup(definitions);
    scheduler.apply(definitions);
    expect(clock.pending).toBe(1);
    expect(Object.keys(JSON.parse(readFileSync(stateFile, "utf8")).agents)).toHaveLength(50);
  });

  it("skips a fire while the previous run still runs under overlap: skip", async () => {
    const definition = makeDefinition({
      id: "busy",
      frontmatter: {
        schedule: { cron: "* * * * * *", overlap: "skip" },
        task: "work",
      },
    });
    const { scheduler, worker, log, runs, clock } = setup([definition]);
    scheduler.apply([definition]);
    clock.advanceBy(1_000);
    await worker.waitForStarted(1);
    clock.advanceBy(1_000);
    const skipped = await log.waitFor((event) => event.type === "skipped" && event.agent === "busy");
    expect(skipped.data).toMatchObject({ reason: "overlap" });
    expect(await runs.list({ agent: "busy" })).toHaveLength(1);
  });

  it("queues a fire behind the previous run under overlap: queue", async () => {
    const definition = makeDefinition({
      id: "queued",
      frontmatter: {
        schedule: { cron: "* * * * * *", overlap: "queue" },
        task: "work",
      },
    });
    const { scheduler, worker, log, runs, clock } = setup([definition], { queueLimit: 3 });
    scheduler.apply([definition]);
    clock.advanceBy(1_000);
    await worker.waitForStarted(1);
    clock.advanceBy(3_000);
    await vi.waitFor(async () =>
      expect(await runs.list({ agent: "queued", status: "queued" })).toHaveLength(3),
    );
    expect(log.events.some((event) => event.type === "skipped")).toBe(false);
    // The queue is full: the next fires are skipped, and say so.
    clock.advanceBy(2_000);
    expect(await runs.list({ agent: "queued", status: "queued" })).toHaveLength(3);
    const skipped = log.events.filter((event) => event.type === "skipped");
    expect(skipped.map((event) => event.data)).toEqual([
      expect.objectContaining({ reason: "queue_full", scheduled_for: new Date(START + 5_000).toISOString() }),
      expect.objectContaining({ reason: "queue_full", scheduled_for: new Date(START + 6_000).toISOString() }),
    ]);
  });

  it("runs a fire missed while the daemon was down once at start under on_missed: run_once", async () => {
    const definition = makeDefinition({
      id: "hourly",
      frontmatter: {
        schedule: { cron: "0 * * * *", on_missed: "run_once", task: "catch up" },
      },
    });
    const dataDirectory = downSince("hourly", new Date(START - 3 * HOUR));
    const { scheduler, worker, log, runs } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    const missed = await log.waitFor((event) => event.type === "missed");
    const [context] = await worker.waitForStarted(1);
    expect(context?.task).toBe("catch up");
    expect(await runs.list({ agent: "hourly" })).toHaveLength(1);
    expect(missed.data).toMatchObject({
      on_missed: "run_once",
      run: context?.runId,
      count: 3,
      scheduled_for: "2026-03-02T08:00:00.000Z",
    });
    expect(runs.get(context?.runId ?? "")?.trigger).toMatchObject({ kind: "missed" });
  });

  it("records a missed event without running under on_missed: skip", async () => {
    const definition = makeDefinition({
      id: "hourly",
      frontmatter: { schedule: { cron: "0 * * * *", on_missed: "skip" } },
    });
    const dataDirectory = downSince("hourly", new Date(START - 3 * HOUR));
    const { scheduler, log, runs } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    const missed = await log.waitFor((event) => event.type === "missed");
    expect(missed.data).toMatchObject({ on_missed: "skip", count: 3 });
    expect(missed.run).toBeNull();
    expect(await runs.list()).toHaveLength(0);
  });

  it("does not report missed fires for an agent seen for the first time", async () => {
    const definition = makeDefinition({
      id: "fresh",
      frontmatter: { schedule: { cron: "0 * * * *" }, task: "x" },
    });
    const { scheduler, log, runs, stateFile } = setup([definition]);
    scheduler.apply([definition]);
    expect(log.events.filter((event) => event.type === "missed")).toHaveLength(0);
    expect(await runs.list()).toHaveLength(0);
    expect(JSON.parse(readFileSync(stateFile, "utf8")).agents.fresh.checked_at).toBeDefined();
  });

  it("does not count a restart within the same schedule period as a missed fire", () => {
    const definition = makeDefinition({
      id: "daily",
      frontmatter: { schedule: { cron: "0 0 1 1 *" }, task: "x" },
    });
    const dataDirectory = downSince("daily", new Date(START - 60_000));
    const { scheduler, log } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    expect(log.events.filter((event) => event.type === "missed")).toHaveLength(0);
  });

  it("adds, changes and removes schedules on hot reload", () => {
    const { scheduler, stateFile } = setup([]);
    scheduler.apply([]);
    expect(scheduler.nextFire("reloaded")).toBeUndefined();
    const tokyo = makeDefinition({
      id: "reloaded",
      frontmatter: {
        schedule: { cron: "0 9 * * *", timezone: "Asia/Tokyo" },
        task: "x",
      },
    });
    scheduler.apply([tokyo]);
    expect(hourIn("Asia/Tokyo", scheduler.nextFire("reloaded"))).toBe("09");
    const berlin = makeDefinition({
      id: "reloaded",
      frontmatter: {
        schedule: { cron: "30 7 * * *", timezone: "Europe/Berlin" },
        task: "x",
      },
    });
    scheduler.apply([berlin]);
    expect(hourIn("Europe/Berlin", scheduler.nextFire("reloaded"))).toBe("07");
    const disabled = makeDefinition({
      id: "reloaded",
      frontmatter: { schedule: { cron: "30 7 * * *" }, enabled: false },
    });
    scheduler.apply([disabled]);
    expect(scheduler.nextFire("reloaded")).toBeUndefined();
    expect(JSON.parse(readFileSync(stateFile, "utf8")).agents.reloaded).toBeUndefined();
  });

  it("restarts on the next fire its state recorded, and works the fires out again when that cannot hold", () => {
    const hourly = makeDefinition({
      id: "hourly",
      frontmatter: { schedule: { cron: "0 * * * *" }, task: "x" },
    });
    const first = setup([hourly]);
    first.scheduler.apply([hourly]);
    first.scheduler.stop();
    const recorded = JSON.parse(readFileSync(first.stateFile, "utf8")).agents.hourly.next;
    expect(recorded).toMatchObject({
      fire: "2026-03-02T09:00:00.000Z",
      after: new Date(START).toISOString(),
    });
    // Taken as recorded while nothing changed (a recorded 09:00 the restart did not compute is served).
    const trusted = { ...recorded, fire: "2026-03-02T09:00:05.000Z" };
    writeFileSync(
      first.stateFile,
      JSON.stringify({ agents: { hourly: { checked_at: new Date(START).toISOString(), next: trusted } } }),
    );
    const restart = setup([hourly], {
      dataDirectory: first.dataDirectory,
      clock: new ManualClock(START + 1_000),
    });
    restart.scheduler.apply([hourly]);
    expect(restart.scheduler.nextFire("hourly")?.toISOString()).toBe("2026-03-02T09:00:05.000Z");
    restart.scheduler.stop();
    // Another cron since: the recorded fire belongs to the old pattern and is not used.
    const halfPast = makeDefinition({
      id: "hourly",
      frontmatter: { schedule: { cron: "30 * * * *" }, task: "x" },
    });
    const changed = setup([halfPast], {
      dataDirectory: first.dataDirectory,
      clock: new ManualClock(START + 2_000),
    });
    changed.scheduler.apply([halfPast]);
    expect(changed.scheduler.nextFire("hourly")?.toISOString()).toBe("2026-03-02T09:30:00.000Z");
  });

  it("reports the fires missed after the recorded next fire passed while the daemon was down", async () => {
    const definition = makeDefinition({
      id: "hourly",
      frontmatter: { schedule: { cron: "0 * * * *", on_missed: "skip" }, task: "x" },
    });
    const first = setup([definition]);
    first.scheduler.apply([definition]);
    first.scheduler.stop();
    const restart = setup([definition], {
      dataDirectory: first.dataDirectory,
      clock: new ManualClock(START + 3 * HOUR),
    });
    restart.scheduler.apply([definition]);
    const missed = await restart.log.waitFor((event) => event.type === "missed");
    expect(missed.data).toMatchObject({ count: 3, scheduled_for: "2026-03-02T11:00:00.000Z" });
    expect(restart.scheduler.nextFire("hourly")?.toISOString()).toBe("2026-03-02T12:00:00.000Z");
  });
});

function downSince(agentId: string, lastFire: Date): string {
  const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-scheduler-"));
  const time = lastFire.toISOString();
  writeFileSync(
    path.join(dataDirectory, "schedules.json"),
    JSON.stringify({ agents: { [agentId]: { last_fire: time, checked_at: time } } }),
  );
  return dataDirectory;
}

function hourIn(timeZone: string, date: Date | undefined): string {
  if (!date) throw new Error("no next fire");
  return new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", hourCycle: "h23" }).format(date);
}
