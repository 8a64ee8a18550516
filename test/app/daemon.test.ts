import { rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Config } from "../../src/config/config-schema.js";
import { type Daemon, type DaemonOverrides, startDaemon } from "../../src/app/daemon.js";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { createLogger } from "../../src/logging/logger.js";
import { ControlledWorker } from "../runs/controlled-worker.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });
const kit = useTestKit();
/** The daemons still to shut down after the test (one the test "crashed" is taken out). */
const running = new Set<Daemon>();

function workspace(grace = 60_000) {
  const project = kit.project({ config: { shutdown: { grace }, log: { level: "silent" } } });
  const writeAgent = (id: string, frontmatter: string[]) =>
    project.writeAgent(
      `${id}.md`,
      ["---", `description: ${id} for tests`, ...frontmatter, "---", "Do the task."].join("\n"),
    );
  return { config: project.config, writeAgent, agentsDirectory: project.agentsDirectory };
}

async function start(config: Config, worker: ControlledWorker): Promise<Daemon> {
  const overrides: DaemonOverrides = {
    logger,
    workerFor: worker.workerFor,
    startApiServer: async () => ({ url: "http://127.0.0.1:0", close: async () => undefined }),
  };
  const daemon = await startDaemon({ config, version: "test", overrides });
  running.add(daemon);
  kit.defer(async () => {
    if (running.delete(daemon)) await daemon.shutdown();
  });
  return daemon;
}

describe("startDaemon", () => {
  it("after a crash finds finished runs intact, interrupted ones failed/crashed, and continues event ids", async () => {
    const { config, writeAgent } = workspace();
    writeAgent("worker", ["task: work"]);
    const firstWorker = new ControlledWorker();
    const first = await start(config, firstWorker);
    const finished = await first.runs.start("worker", "finish me");
    await firstWorker.waitForStarted(1);
    firstWorker.finish(finished.id);
    await waitFor(() => first.runs.get(finished.id)?.status === "completed", "the first run to complete");
    const interrupted = await first.runs.start("worker", "cut short");
    await waitFor(() => first.runs.get(interrupted.id)?.status === "running", "the second run to start");
    // The worker has published what it does when started: nothing more comes before the "crash".
    await firstWorker.waitForStarted(2);
    const lastIdBefore = first.events.lastId("worker");
    // Simulate kill -9: drop the first daemon without draining its runs.
    running.delete(first);
    await first.definitions.close();
    first.events.close();
    // The process would be gone, and its lock with it (a dead holder's lock is taken over).
    first.lock.release();

    const second = await start(config, new ControlledWorker());
    expect(second.runs.get(finished.id)?.status).toBe("completed");
    expect(second.runs.get(interrupted.id)).toMatchObject({ status: "failed", reason: "crashed" });
    const page = second.events.poll("worker", { after: lastIdBefore });
    expect(page.events[0]).toMatchObject({
      id: lastIdBefore + 1,
      run: interrupted.id,
      type: "status",
      data: { status: "failed", reason: "crashed" },
    });
  });

  it("on shutdown lets a run finish within the grace period and stops the rest with daemon_shutdown", async () => {
    const { config, writeAgent } = workspace(500);
    writeAgent("worker", ["task: work", "limits: { max_concurrent_runs: 2 }"]);
    const worker = new ControlledWorker();
    const daemon = await start(config, worker);
    const quick = await daemon.runs.start("worker", "quick");
    const slow = await daemon.runs.start("worker", "slow");
    await worker.waitForStarted(2);
    const stopping = daemon.shutdown();
    const refused = await daemon.runs.start("worker", "late").catch((error: unknown) => error);
    expect(AgentdError.is(refused, "SHUTTING_DOWN")).toBe(true);
    worker.finish(quick.id);
    await stopping;
    expect(daemon.runs.get(quick.id)?.status).toBe("completed");
    expect(daemon.runs.get(slow.id)).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
  });

  it("follows schedule edits and removals in agent files", async () => {
    const { config, writeAgent, agentsDirectory } = workspace();
    writeAgent("nightly", ["task: work", 'schedule: "0 3 * * *"']);
    const daemon = await start(config, new ControlledWorker());
    expect(daemon.scheduler.nextFire("nightly")?.getMinutes()).toBe(0);
    writeAgent("nightly", ["task: work", 'schedule: "30 4 * * *"']);
    await waitFor(() => daemon.scheduler.nextFire("nightly")?.getMinutes() === 30, "the edited schedule");
    rmSync(path.join(agentsDirectory, "nightly.md"));
    await waitFor(() => daemon.scheduler.nextFire("nightly") === undefined, "the schedule to be removed");
  });
});
