import { describe, expect, it } from "vitest";
import { type Daemon, startDaemon } from "../../src/app/daemon.js";
import { createLogger } from "../../src/logging/logger.js";
import { ControlledWorker } from "../runs/controlled-worker.js";
import { ManualClock } from "../support/manual-clock.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });
const kit = useTestKit();
const START = Date.UTC(2026, 0, 5, 9);

/**
 * The daemon on a clock moved by hand: run timeouts count working time on the clock the
 * composition root hands down, so a test moves time instead of waiting for it (a loaded machine
 * cannot make the working time before a pause run out, as it could with a real 2 s timeout).
 */
async function clockedDaemon(): Promise<{ daemon: Daemon; worker: ControlledWorker; clock: ManualClock }> {
  const project = kit.project({ config: { log: { level: "silent" } } });
  project.writeAgent("patient", { limits: { timeout: "2s" } });
  const clock = new ManualClock(START);
  const worker = new ControlledWorker();
  const daemon = await startDaemon({
    config: project.config,
    version: "test",
    overrides: {
      logger,
      clock,
      workerFor: worker.workerFor,
      startApiServer: async () => ({ url: "http://127.0.0.1:0", close: async () => undefined }),
    },
  });
  kit.defer(() => daemon.shutdown());
  // The pruner's start prune done, its hourly timer is on the clock: the timers counted below are the runs'.
  await daemon.retention?.pruneNow();
  return { daemon, worker, clock };
}

describe("the daemon's clock", () => {
  it("stamps records and times runs out on the clock it was given, counting working time only", async () => {
    const { daemon, worker, clock } = await clockedDaemon();
    const idle = clock.pending;
    const paused = await daemon.runs.start("patient", "pause me");
    expect(paused.created_at).toBe(new Date(START).toISOString());
    await worker.waitForStarted(1);
    // The run's timeout is a timer on this clock, and a pause takes it off.
    expect(clock.pending).toBe(idle + 1);
    await daemon.runs.pause(paused.id);
    expect(clock.pending).toBe(idle);
    clock.advanceBy(60_000);
    expect(daemon.runs.get(paused.id)?.status).toBe("paused");
    await daemon.runs.resume(paused.id);
    clock.advanceBy(1_999);
    expect(daemon.runs.get(paused.id)?.status).toBe("running");
    worker.finish(paused.id);
    await waitFor(() => daemon.runs.get(paused.id)?.status === "completed", "the paused run to complete");

    const left = await daemon.runs.start("patient", "leave me running");
    await worker.waitForStarted(2);
    clock.advanceBy(1_999);
    expect(daemon.runs.get(left.id)?.status).toBe("running");
    clock.advanceBy(1);
    const ended = await waitFor(() => {
      const record = daemon.runs.get(left.id);
      return record?.status === "failed" ? record : undefined;
    }, "the run to time out");
    expect(ended.reason).toBe("timeout");
    expect(ended.ended_at).toBe(new Date(START + 60_000 + 1_999 + 1_999 + 1).toISOString());
  });

  it("does not count the time a run waits for a human", async () => {
    const { daemon, worker, clock } = await clockedDaemon();
    const run = await daemon.runs.start("patient", "ask first");
    const [context] = await worker.waitForStarted(1);
    await context?.setStatus("waiting");
    clock.advanceBy(60_000);
    expect(daemon.runs.get(run.id)?.status).toBe("waiting");
    await context?.setStatus("running");
    clock.advanceBy(1_999);
    expect(daemon.runs.get(run.id)?.status).toBe("running");
    worker.finish(run.id);
    await waitFor(() => daemon.runs.get(run.id)?.status === "completed", "the run to complete");
  });
});
