import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import type { AgentAvailability } from "../../src/runs/agent-availability.js";
import { RunAbort } from "../../src/run-vocabulary/run-control.js";
import { RunManager } from "../../src/runs/run-manager.js";
import { RunStore } from "../../src/runs/run-store.js";
import type { Worker } from "../../src/workers/worker.js";
import { ControlledWorker } from "./controlled-worker.js";
import { EventLog } from "./event-waiter.js";
import { makeDefinition } from "../support/make-definition.js";
import { runRecordOnDisk } from "../support/run-record-on-disk.js";

const logger = createLogger({ level: "silent", pretty: false });

interface Setup {
  manager: RunManager;
  store: RunStore;
  bus: EventBus;
  worker: ControlledWorker;
  log: EventLog;
  dataDirectory: string;
  agents: Map<string, AgentAvailability>;
  shutdown: AbortController;
}

function setup(
  options: {
    concurrency?: number;
    definitions?: AgentDefinition[];
    worker?: Worker;
    dataDirectory?: string;
  } = {},
): Setup {
  const dataDirectory = options.dataDirectory ?? mkdtempSync(path.join(tmpdir(), "agentd-runs-"));
  const bus = new EventBus();
  const log = new EventLog(bus);
  const worker = new ControlledWorker();
  const agents = new Map<string, AgentAvailability>();
  for (const definition of options.definitions ?? [makeDefinition({ id: "alpha" })]) {
    agents.set(definition.id, { state: "ready", definition });
  }
  const shutdown = new AbortController();
  const store = RunStore.open({ dataDirectory, logger });
  const manager = new RunManager({
    store,
    events: bus,
    agents: (id) => agents.get(id),
    workerFor: () => options.worker ?? worker,
    concurrency: options.concurrency ?? 4,
    shutdownSignal: shutdown.signal,
    logger,
  });
  return { manager, store, bus, worker, log, dataDirectory, agents, shutdown };
}

/** The run as a restart would read it back from disk. */
function recordOnDisk(dataDirectory: string, runId: string): { status: string; reason?: string } {
  const record = runRecordOnDisk(dataDirectory, runId);
  if (!record) throw new Error(`run ${runId} is not on disk`);
  return record;
}

async function errorOf(action: () => unknown): Promise<AgentdError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof AgentdError) return error;
    throw error;
  }
  throw new Error("expected an AgentdError");
}

describe("RunManager", () => {
  it("runs a task to completion and records the worker's result", async () => {
    const { manager, worker, log, dataDirectory } = setup();
    const run = await manager.start("alpha", "summarise the logs");
    expect(run.id).toMatch(/^r_[0-9a-z]{21}$/);
    await worker.waitForStarted(1);
    worker.finish(run.id, { result: "all quiet", cost_usd: 0.25 });
    await log.waitForStatus(run.id, "completed");
    const finished = manager.get(run.id);
    expect(finished).toMatchObject({
      status: "completed",
      result: "all quiet",
      cost_usd: 0.25,
      task: "summarise the logs",
    });
    expect(finished?.ended_at).toBeDefined();
    expect(log.statuses(run.id)).toEqual(["queued", "running", "completed"]);
    expect(recordOnDisk(dataDirectory, run.id).status).toBe("completed");
  });

  it("writes each status to disk before publishing its event", async () => {
    const { manager, worker, log, dataDirectory, bus } = setup();
    const onDiskWhenPublished: Array<[string, string]> = [];
    bus.subscribe((event) => {
      if (event.type !== "status" || event.run === null) return;
      onDiskWhenPublished.push([event.data.status, recordOnDisk(dataDirectory, event.run).status]);
    });
    const run = await manager.start("alpha", "check ordering");
    await worker.waitForStarted(1);
    await manager.pause(run.id);
    await manager.resume(run.id);
    worker.finish(run.id);
    await log.waitForStatus(run.id, "completed");
    expect(onDiskWhenPublished).toEqual([
      ["queued", "queued"],
      ["running", "running"],
      ["paused", "paused"],
      ["running", "running"],
      ["completed", "completed"],
    ]);
  });

  it("keeps runs queued in FIFO order under the daemon-wide concurrency", async () => {
    const definitions = ["a", "b", "c", "d"].map((id) => makeDefinition({ id: id }));
    const { manager, worker, log } = setup({ concurrency: 2, definitions });
    const runs = [];
    for (const id of ["a", "b", "c", "d"]) runs.push(await manager.start(id, `task ${id}`));
    await worker.waitForStarted(2);
    expect(runs.map((run) => manager.get(run.id)?.status)).toEqual([
      "running",
      "running",
      "queued",
      "queued",
    ]);
    expect(manager.queueDepth()).toBe(2);

    worker.finish(runs[1]?.id ?? "");
    await log.waitForStatus(runs[2]?.id ?? "", "running");
    await worker.waitForStarted(3);
    expect(manager.get(runs[3]?.id ?? "")?.status).toBe("queued");
    // a and b started side by side (either may reach the worker first); c, first in the queue, next.
    const started = worker.started.map((context) => context.task);
    expect(started.slice(0, 2).sort()).toEqual(["task a", "task b"]);
    expect(started[2]).toBe("task c");
  });

  it("holds an agent to its max_concurrent_runs without blocking other agents", async () => {
    const definitions = [
      makeDefinition({ id: "single", frontmatter: { limits: { max_concurrent_runs: 1 } } }),
      makeDefinition({ id: "other" }),
    ];
    const { manager, worker, log } = setup({ definitions });
    const first = await manager.start("single", "one");
    const second = await manager.start("single", "two");
    const other = await manager.start("other", "three");
    await worker.waitForStarted(2);
    expect(manager.get(second.id)?.status).toBe("queued");
    expect(manager.get(other.id)?.status).toBe("running");
    worker.finish(first.id);
    await log.waitForStatus(second.id, "running");
  });

  it("pauses, resumes and stops a run through its control", async () => {
    const { manager, worker, log } = setup();
    const run = await manager.start("alpha", "long job");
    const [context] = await worker.waitForStarted(1);
    expect((await manager.pause(run.id)).status).toBe("paused");
    expect(context?.control.paused).toBe(true);
    expect(manager.get(run.id)?.status).toBe("paused");
    expect((await manager.resume(run.id)).status).toBe("running");
    expect(context?.control.paused).toBe(false);
    await manager.stop(run.id);
    await log.waitForStatus(run.id, "stopped");
    expect(manager.get(run.id)).toMatchObject({ status: "stopped", reason: "user_stop" });
    const error = await errorOf(() => manager.pause(run.id));
    expect(error.code).toBe("CONFLICT");
  });

  it("returns to waiting when a run paused during an approval is resumed", async () => {
    const { manager, worker, log } = setup();
    const run = await manager.start("alpha", "needs approval");
    const [context] = await worker.waitForStarted(1);
    await context?.setStatus("waiting");
    await log.waitForStatus(run.id, "waiting");
    expect(manager.get(run.id)?.status).toBe("waiting");
    await manager.pause(run.id);
    expect((await manager.resume(run.id)).status).toBe("waiting");
    await context?.setStatus("running");
    expect(manager.get(run.id)?.status).toBe("running");
  });

  it("stops a queued run at once", async () => {
    const { manager } = setup({
      concurrency: 1,
      definitions: [makeDefinition({ id: "a" }), makeDefinition({ id: "b" })],
    });
    await manager.start("a", "first");
    const queued = await manager.start("b", "second");
    expect(await manager.stop(queued.id)).toMatchObject({ status: "stopped", reason: "user_stop" });
    expect(manager.get(queued.id)).toMatchObject({ status: "stopped", reason: "user_stop" });
    expect(manager.queueDepth()).toBe(0);
  });

  it("fails a run that passes its timeout with reason timeout", async () => {
    const { manager, log } = setup({
      definitions: [makeDefinition({ id: "slow", frontmatter: { limits: { timeout: 100 } } })],
    });
    const run = await manager.start("slow", "never ends");
    await log.waitForStatus(run.id, "failed");
    expect(manager.get(run.id)).toMatchObject({ status: "failed", reason: "timeout" });
  });

  it("fails a run whose worker throws, with the error and a reason", async () => {
    const throwing: Worker = {
      run: async () => {
        throw new AgentdError("LLM_HTTP", "the endpoint answered 500");
      },
    };
    const { manager, log } = setup({ worker: throwing });
    const run = await manager.start("alpha", "boom");
    await log.waitForStatus(run.id, "failed");
    expect(manager.get(run.id)).toMatchObject({
      status: "failed",
      reason: "llm_error",
      error: { code: "LLM_HTTP", message: "the endpoint answered 500" },
    });
  });

  it("refuses unknown, invalid and disabled agents with NOT_FOUND, CONFLICT and AGENT_DISABLED", async () => {
    const { manager, agents } = setup();
    agents.set("broken", { state: "invalid", errors: ["agents/broken.md: description is required"] });
    agents.set("off", {
      state: "disabled",
      definition: makeDefinition({ id: "off", frontmatter: { enabled: false } }),
    });
    expect((await errorOf(() => manager.start("ghost", "x"))).code).toBe("NOT_FOUND");
    const invalid = await errorOf(() => manager.start("broken", "x"));
    expect(invalid.code).toBe("CONFLICT");
    expect(invalid.message).toContain("description is required");
    expect((await errorOf(() => manager.start("off", "x"))).code).toBe("AGENT_DISABLED");
    expect((await errorOf(() => manager.stop("r_missing"))).code).toBe("NOT_FOUND");
  });

  it("uses the agent's own task when none is given, and refuses a run with no task at all", async () => {
    const { manager, agents } = setup();
    agents.set("tasked", {
      state: "ready",
      definition: makeDefinition({ id: "tasked", frontmatter: { task: "the usual" } }),
    });
    expect((await manager.start("tasked")).task).toBe("the usual");
    expect((await errorOf(() => manager.start("alpha"))).code).toBe("BAD_REQUEST");
  });

  it("keeps the definition a run started with when the agent changes", async () => {
    const { manager, worker, agents } = setup();
    const before = makeDefinition({ id: "alpha" });
    agents.set("alpha", { state: "ready", definition: before });
    const run = await manager.start("alpha", "x");
    agents.set("alpha", { state: "ready", definition: { ...before, hash: "changed", model: "other" } });
    const [context] = await worker.waitForStarted(1);
    expect(context?.definition.hash).toBe(before.hash);
    expect(manager.get(run.id)?.definition_hash).toBe(before.hash);
  });

  it("on shutdown refuses new runs, stops queued ones, and stops running ones with daemon_shutdown", async () => {
    const { manager, worker, log, shutdown } = setup({
      concurrency: 1,
      definitions: [makeDefinition({ id: "a" }), makeDefinition({ id: "b" })],
    });
    const running = await manager.start("a", "first");
    const queued = await manager.start("b", "second");
    await worker.waitForStarted(1);
    manager.stopAccepting();
    await log.waitForStatus(queued.id, "stopped");
    expect(manager.get(queued.id)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
    expect((await errorOf(() => manager.start("a", "late"))).code).toBe("SHUTTING_DOWN");
    expect(await manager.waitUntilIdle(50)).toBe(false);
    shutdown.abort(new RunAbort("daemon_shutdown", "the daemon is shutting down"));
    expect(await manager.waitUntilIdle(10_000)).toBe(true);
    await log.waitForStatus(running.id, "stopped");
    expect(manager.get(running.id)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
  });

  it("after a crash marks unfinished runs failed/crashed and leaves finished ones intact", async () => {
    const first = setup({ definitions: [makeDefinition({ id: "a" }), makeDefinition({ id: "b" })] });
    const finished = await first.manager.start("a", "done before the crash");
    await first.worker.waitForStarted(1);
    first.worker.finish(finished.id, { result: "kept" });
    await first.log.waitForStatus(finished.id, "completed");
    const interrupted = await first.manager.start("b", "cut short");
    await first.worker.waitForStarted(2);
    // No shutdown: the first manager is simply abandoned, as kill -9 would leave it (its writes in
    // the kernel: none of them lands after the restart's, as none of a killed process's would).
    await first.store.settled();
    const second = setup({ dataDirectory: first.dataDirectory, definitions: [makeDefinition({ id: "a" })] });
    await second.manager.published();
    expect(second.manager.get(finished.id)).toMatchObject({ status: "completed", result: "kept" });
    expect(second.manager.get(interrupted.id)).toMatchObject({ status: "failed", reason: "crashed" });
    expect(recordOnDisk(first.dataDirectory, interrupted.id)).toMatchObject({
      status: "failed",
      reason: "crashed",
    });
    expect(second.manager.recovered.map((run) => run.id)).toEqual([interrupted.id]);
    const event = await second.log.waitForStatus(interrupted.id, "failed");
    expect(event.data).toMatchObject({ reason: "crashed" });
    expect((await second.manager.list()).map((run) => run.id)).toEqual([interrupted.id, finished.id]);
  });
});
