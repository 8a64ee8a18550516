import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.js";
import { EventBus } from "../../src/events/event-bus.js";
import { createLogger } from "../../src/logging/logger.js";
import { addUsage, EMPTY_USAGE, type Usage } from "../../src/run-vocabulary/run-status.js";
import type { RunOutcome } from "../../src/run-vocabulary/run-outcome.js";
import { SPENDING_WRITE_INTERVAL_MILLISECONDS } from "../../src/runs/launch/spending-writes.js";
import { RunManager } from "../../src/runs/run-manager.js";
import { RunStore } from "../../src/runs/run-store.js";
import type { RunContext, Worker } from "../../src/workers/worker.js";
import { makeDefinition } from "../support/make-definition.js";
import { ManualClock } from "../support/manual-clock.js";
import { waitFor } from "../support/wait-for.js";
import { EventLog } from "./event-waiter.js";

const logger = createLogger({ level: "silent", pretty: false });
const CALL: Usage = { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 };

/**
 * A worker that spends as the LLM loop does: each call's usage told to the run (recordSpending),
 * then the checkpoint saved with the spending so far; then it waits until the test lets it end.
 */
class SpendingWorker implements Worker {
  #spend: ((calls: number) => Promise<void>) | undefined;
  #finish: (() => void) | undefined;

  run(context: RunContext): Promise<RunOutcome> {
    // A resumed run goes on from its checkpoint's spending, as the LLM loop's budget does.
    let usage = context.checkpoints?.resumeFrom?.usage ?? EMPTY_USAGE;
    let costUsd = context.checkpoints?.resumeFrom?.cost_usd ?? 0;
    this.#spend = async (calls) => {
      for (let call = 0; call < calls; call++) {
        usage = addUsage(usage, CALL);
        costUsd += 0.01;
        context.recordSpending?.(CALL, 0.01);
        await context.checkpoints?.save({
          round: call + 1,
          messages: [{ role: "user", content: context.task }],
          usage,
          cost_usd: costUsd,
          removed_tools: [],
          recent_calls: [],
        });
      }
    };
    return new Promise((resolve, reject) => {
      this.#finish = () =>
        resolve({ status: "completed", result: "done", usage, cost_usd: costUsd, worker: "test" });
      context.control.signal.addEventListener("abort", () => reject(context.control.signal.reason), {
        once: true,
      });
    });
  }

  async spend(calls: number): Promise<void> {
    await waitFor(() => this.#spend !== undefined, "the run to start");
    await this.#spend?.(calls);
  }

  finish(): void {
    this.#finish?.();
  }
}

function setup(dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-spending-"))) {
  const bus = new EventBus();
  const log = new EventLog(bus);
  const clock = new ManualClock(Date.parse("2026-11-29T12:00:00Z"));
  const worker = new SpendingWorker();
  const definition = makeDefinition({ id: "alpha" });
  const manager = new RunManager({
    store: RunStore.open({ dataDirectory, logger }),
    checkpoints: new CheckpointStore({ dataDirectory, logger }),
    events: bus,
    agents: (id) => (id === "alpha" ? { state: "ready", definition } : undefined),
    workerFor: () => worker,
    concurrency: 4,
    shutdownSignal: new AbortController().signal,
    clock,
    logger,
  });
  return { manager, log, clock, worker, dataDirectory };
}

/** The record as another reader (or a restart) finds it on disk. */
function tokensOnDisk(dataDirectory: string, runId: string): number | undefined {
  return RunStore.open({ dataDirectory, logger }).get(runId)?.usage.total_tokens;
}

describe("a run's spending while it runs", () => {
  it("is written at most once per interval, the last of it within one, and whole at the end", async () => {
    const { manager, log, clock, worker, dataDirectory } = setup();
    const run = await manager.start("alpha", "spend");
    await log.waitForStatus(run.id, "running");
    await worker.spend(3);
    // Three calls, no write of the record yet: the spending waits for the interval.
    expect(tokensOnDisk(dataDirectory, run.id)).toBe(0);
    clock.advanceBy(SPENDING_WRITE_INTERVAL_MILLISECONDS);
    await waitFor(() => tokensOnDisk(dataDirectory, run.id) === 450, "the spending on disk");
    await worker.spend(1);
    worker.finish();
    const ended = await log.waitForStatus(run.id, "completed");
    expect(ended.data).toMatchObject({ usage: { total_tokens: 600 }, cost_usd: 0.04 });
    expect(tokensOnDisk(dataDirectory, run.id)).toBe(600);
  });

  it("after a crash, is taken from the checkpoint where the record had not caught up", async () => {
    const first = setup();
    const run = await first.manager.start("alpha", "spend, then crash");
    await first.log.waitForStatus(run.id, "running");
    await first.worker.spend(2);
    // No shutdown and no timer: the first manager is abandoned, as kill -9 would leave it.
    expect(tokensOnDisk(first.dataDirectory, run.id)).toBe(0);
    const second = setup(first.dataDirectory);
    await second.manager.published();
    const crashed = second.manager.get(run.id);
    expect(crashed).toMatchObject({ status: "failed", reason: "crashed", cost_usd: 0.02 });
    expect(crashed?.usage).toEqual({ prompt_tokens: 200, completion_tokens: 100, total_tokens: 300 });

    // Resumed, the run adds what it spends after: counted once, on top of what it had.
    await second.manager.resume(run.id);
    await second.worker.spend(1);
    second.worker.finish();
    const ended = await second.log.waitForStatus(run.id, "completed");
    expect(ended.data).toMatchObject({ usage: { total_tokens: 450 } });
  });
});
