import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type Daemon, startDaemon } from "../../src/app/daemon.js";
import { createLogger } from "../../src/logging/logger.js";
import { ControlledWorker } from "../runs/controlled-worker.js";
import { ManualClock } from "../support/manual-clock.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const logger = createLogger({ level: "silent", pretty: false });
const kit = useTestKit();

interface PollPage {
  events: Array<{ id: number; type: string; run: string | null }>;
  next: number;
  missed: number;
}

/** The daemon's API over HTTP, as a client sees it. */
function client(daemon: Daemon) {
  return async <Body>(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: Body }> => {
    const response = await fetch(`${daemon.url}${route}`, {
      method,
      headers: {
        ...(daemon.token ? { authorization: `Bearer ${daemon.token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Body };
  };
}

describe("retention", () => {
  it("prunes finished runs past an agent's runs_per_agent while a client polls: the poller is told what it missed and loses nothing after", async () => {
    const project = kit.project({
      config: {
        server: { port: 0 },
        events: { buffer_size: 4 },
        retention: { days: 30, runs_per_agent: 2 },
        log: { level: "silent" },
      },
    });
    project.writeAgent(
      "keeper.md",
      ["---", "description: keeps three", "retention:", "  runs_per_agent: 3", "---", "Do it."].join("\n"),
    );
    const clock = new ManualClock(Date.now());
    const worker = new ControlledWorker();
    const daemon = await startDaemon({
      config: project.config,
      version: "test",
      overrides: { logger, workerFor: worker.workerFor, clock },
    });
    kit.defer(() => daemon.shutdown());
    const api = client(daemon);
    // The pruner ran at start and waits for its next hour on the clock.
    await waitFor(() => clock.pending > 0, "the pruner's next hour");

    const seen: number[] = [];
    let missed = 0;
    let cursor = 0;
    const pollOnce = async () => {
      const page = (await api<PollPage>("GET", `/agents/keeper/events?after=${cursor}&limit=2`)).body;
      missed += page.missed;
      seen.push(...page.events.map((event) => event.id));
      cursor = page.next;
      return page;
    };

    const runs: string[] = [];
    const runOne = async (task: string) => {
      const answer = await api<{ run: string }>("POST", "/agents/keeper/runs", { task });
      const run = answer.body.run;
      await worker.waitForStarted(runs.length + 1);
      worker.finish(run);
      await waitFor(
        async () => (await api<{ status: string }>("GET", `/runs/${run}`)).body.status === "completed",
        `run ${run} to complete`,
      );
      runs.push(run);
    };
    await runOne("one");
    await pollOnce();
    for (const task of ["two", "three", "four", "five"]) await runOne(task);

    await daemon.retention?.pruneNow();
    const listed = (await api<{ runs: Array<{ id: string }> }>("GET", "/runs?agent=keeper")).body.runs;
    expect(listed.map((run) => run.id)).toEqual(runs.slice(-3).reverse());
    expect((await api("GET", `/runs/${runs[0]}`)).status).toBe(404);
    const runsDirectory = path.join(project.config.data_dir, "runs");
    expect(existsSync(path.join(runsDirectory, `${runs[0]}.json`))).toBe(false);
    expect(existsSync(path.join(runsDirectory, `${runs[0]}.events.jsonl`))).toBe(false);
    expect(existsSync(path.join(runsDirectory, `${runs.at(-1)}.json`))).toBe(true);

    // The poller fell behind the pruned runs: told how many it missed, then it goes on.
    await pollOnce();
    expect(missed).toBeGreaterThan(0);
    await runOne("six");
    for (let page = await pollOnce(); page.events.length > 0; page = await pollOnce());
    const lastId = daemon.events.lastId("keeper");
    // Every id up to the last is either received or counted as missed: nothing lost, nothing twice.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length + missed).toBe(lastId);
    expect(seen.at(-1)).toBe(lastId);
    // The run after the prune is whole in the poller's view.
    const sixth = runs.at(-1);
    expect(
      (await api<{ events: unknown[] }>("GET", `/runs/${sixth}/events`)).body.events.length,
    ).toBeGreaterThan(2);

    // The next prune comes with the clock's hour.
    await runOne("seven");
    clock.advanceBy(60 * 60 * 1000);
    await waitFor(async () => (await api("GET", `/runs/${runs.at(-4)}`)).status === 404, "the hourly prune");
  });
});
