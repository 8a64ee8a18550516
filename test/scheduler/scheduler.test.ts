import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import type { AgentAvailability } from "../../src/runs/agent-availability.js";
import { RunManager } from "../../src/runs/run-manager.js";
import { RunStore } from "../../src/runs/run-store.js";
import { ScheduleState } from "../../src/scheduler/schedule-state.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { ControlledWorker } from "../runs/controlled-worker.js";
import { EventLog } from "../runs/event-waiter.js";
import { testDefinition } from "../runs/test-definition.js";

const logger = createLogger({ level: "silent", pretty: false });
const schedulers: Scheduler[] = [];

afterEach(() => {
  for (const scheduler of schedulers.splice(0)) scheduler.stop();
});

function setup(definitions: AgentDefinition[], options: { dataDirectory?: string } = {}) {
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
  });
  schedulers.push(scheduler);
  return { scheduler, runs, worker, log, agents, stateFile, dataDirectory };
}

const HOUR = 3_600_000;

describe("Scheduler", () => {
  it("fires a seconds-level cron with the schedule's task and records the fire", async () => {
    const definition = testDefinition("ticker", { schedule: { cron: "* * * * * *", task: "tick" } });
    const { scheduler, worker, stateFile } = setup([definition]);
    scheduler.apply([definition]);
    expect(scheduler.nextFire("ticker")).toBeInstanceOf(Date);
    const [context] = await worker.waitForStarted(1);
    expect(context?.task).toBe("tick");
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    expect(Date.parse(state.agents.ticker.last_fire)).toBeLessThanOrEqual(Date.now());
  });

  it("skips a fire while the previous run still runs under overlap: skip", async () => {
    const definition = testDefinition("busy", {
      schedule: { cron: "* * * * * *", overlap: "skip" },
      task: "work",
    });
    const { scheduler, worker, log, runs } = setup([definition]);
    scheduler.apply([definition]);
    await worker.waitForStarted(1);
    const skipped = await log.waitFor((event) => event.type === "skipped" && event.agent === "busy");
    expect(skipped.data).toMatchObject({ reason: "overlap" });
    expect(runs.list({ agent: "busy" })).toHaveLength(1);
  });

  it("queues a fire behind the previous run under overlap: queue", async () => {
    const definition = testDefinition("queued", {
      schedule: { cron: "* * * * * *", overlap: "queue" },
      task: "work",
    });
    const { scheduler, worker, log, runs } = setup([definition]);
    scheduler.apply([definition]);
    await worker.waitForStarted(1);
    await log.waitFor(
      (event) => event.type === "status" && event.data.status === "queued" && runs.list().length >= 2,
    );
    expect(runs.list({ agent: "queued", status: "queued" }).length).toBeGreaterThanOrEqual(1);
    expect(log.events.some((event) => event.type === "skipped")).toBe(false);
  });

  it("runs a fire missed while the daemon was down once at start under on_missed: run_once", async () => {
    const definition = testDefinition("hourly", {
      schedule: { cron: "0 * * * *", on_missed: "run_once", task: "catch up" },
    });
    const dataDirectory = downSince("hourly", new Date(Date.now() - 3 * HOUR));
    const { scheduler, worker, log, runs } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    const missed = await log.waitFor((event) => event.type === "missed");
    const [context] = await worker.waitForStarted(1);
    expect(context?.task).toBe("catch up");
    expect(runs.list({ agent: "hourly" })).toHaveLength(1);
    expect(missed.data).toMatchObject({ on_missed: "run_once", run: context?.runId });
    expect(runs.get(context?.runId ?? "")?.trigger).toMatchObject({ kind: "missed" });
  });

  it("records a missed event without running under on_missed: skip", async () => {
    const definition = testDefinition("hourly", { schedule: { cron: "0 * * * *", on_missed: "skip" } });
    const dataDirectory = downSince("hourly", new Date(Date.now() - 3 * HOUR));
    const { scheduler, log, runs } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    const missed = await log.waitFor((event) => event.type === "missed");
    expect(missed.data).toMatchObject({ on_missed: "skip" });
    expect(missed.run).toBeNull();
    expect(runs.list()).toHaveLength(0);
  });

  it("does not report missed fires for an agent seen for the first time", () => {
    const definition = testDefinition("fresh", { schedule: { cron: "0 * * * *" }, task: "x" });
    const { scheduler, log, runs, stateFile } = setup([definition]);
    scheduler.apply([definition]);
    expect(log.events.filter((event) => event.type === "missed")).toHaveLength(0);
    expect(runs.list()).toHaveLength(0);
    expect(JSON.parse(readFileSync(stateFile, "utf8")).agents.fresh.checked_at).toBeDefined();
  });

  it("does not count a restart within the same schedule period as a missed fire", () => {
    const definition = testDefinition("daily", { schedule: { cron: "0 0 1 1 *" }, task: "x" });
    const dataDirectory = downSince("daily", new Date(Date.now() - 60_000));
    const { scheduler, log } = setup([definition], { dataDirectory });
    scheduler.apply([definition]);
    expect(log.events.filter((event) => event.type === "missed")).toHaveLength(0);
  });

  it("adds, changes and removes schedules on hot reload", () => {
    const { scheduler, stateFile } = setup([]);
    scheduler.apply([]);
    expect(scheduler.nextFire("reloaded")).toBeUndefined();
    const tokyo = testDefinition("reloaded", {
      schedule: { cron: "0 9 * * *", timezone: "Asia/Tokyo" },
      task: "x",
    });
    scheduler.apply([tokyo]);
    expect(hourIn("Asia/Tokyo", scheduler.nextFire("reloaded"))).toBe("09");
    const berlin = testDefinition("reloaded", {
      schedule: { cron: "30 7 * * *", timezone: "Europe/Berlin" },
      task: "x",
    });
    scheduler.apply([berlin]);
    expect(hourIn("Europe/Berlin", scheduler.nextFire("reloaded"))).toBe("07");
    const disabled = testDefinition("reloaded", { schedule: { cron: "30 7 * * *" }, enabled: false });
    scheduler.apply([disabled]);
    expect(scheduler.nextFire("reloaded")).toBeUndefined();
    expect(JSON.parse(readFileSync(stateFile, "utf8")).agents.reloaded).toBeUndefined();
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
