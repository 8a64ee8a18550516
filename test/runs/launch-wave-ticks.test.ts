import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import type { AgentAvailability } from "../../src/runs/agent-availability.js";
import { LAUNCHES_PER_TICK } from "../../src/runs/launch/launch-pacing.js";
import { RunManager } from "../../src/runs/run-manager.js";
import { RunStore } from "../../src/runs/run-store.js";
import { makeDefinition } from "../support/make-definition.js";
import { ControlledWorker } from "./controlled-worker.js";

const logger = createLogger({ level: "silent", pretty: false });
const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A run manager on a real store in a temp folder, with `count` ready agents and a ControlledWorker. */
function managerOf(count: number) {
  const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-wave-"));
  folders.push(dataDirectory);
  const agents = new Map<string, AgentAvailability>();
  for (let index = 0; index < count; index += 1) {
    const definition = makeDefinition({ id: `ticker-${index}` });
    agents.set(definition.id, { state: "ready", definition });
  }
  const worker = new ControlledWorker();
  const shutdown = new AbortController();
  const store = RunStore.open({ dataDirectory, logger });
  const manager = new RunManager({
    store,
    events: new EventBus(),
    agents: (id) => agents.get(id),
    workerFor: () => worker,
    concurrency: count,
    shutdownSignal: shutdown.signal,
    logger,
  });
  // As the scheduler does for a wake: every due run started in one turn.
  const startAll = () => Promise.all([...agents.keys()].map((agent) => manager.start(agent, "tick")));
  const close = async (runs: Array<{ id: string }>) => {
    for (const run of runs) worker.finish(run.id);
    expect(await manager.waitUntilIdle(10_000)).toBe(true);
    await manager.published();
    await store.settled();
    store.close();
    shutdown.abort();
  };
  return { manager, worker, startAll, close };
}

/**
 * The fires due in one second (issue 29 item 4): more runs queued at once than launch in one tick.
 * What no first model request needs (a run's round-0 checkpoint, the end of a run that already
 * answered, the schedule state) waits for the launches under way: the wave must last until the
 * last of them started, not end in the gap between two ticks of launches.
 */
describe("the launch wave of runs queued together", () => {
  it("keeps work for after the launches until every run queued with it has started", async () => {
    const count = LAUNCHES_PER_TICK * 2 + 1;
    const { manager, worker, startAll, close } = managerOf(count);
    // The wake's own bookkeeping is handed over once its runs are all queued.
    const runs = await startAll();
    const startedWhenTheWorkRan = await new Promise<number>((resolve) =>
      manager.afterLaunches(() => resolve(worker.started.length)),
    );
    expect(startedWhenTheWorkRan).toBe(count);
    await close(runs);
  });

  // Between two turns the event loop reads sockets: the answers to the first runs' requests, with
  // their streams, checkpoints and ends. 20 agents due in the same second all send their first
  // request before any of that is read: their workers all start in one turn.
  it("starts the workers of 20 runs due in the same second in one turn of the event loop", async () => {
    const { worker, startAll, close } = managerOf(20);
    const firstStarted = worker.waitForStarted(1);
    const runs = await startAll();
    // Resolved in the turn the first worker started, before the event loop reads any socket.
    await firstStarted;
    expect(worker.started.length).toBe(20);
    await close(runs);
  });
});
