import type { AgentEvent } from "../../src/events/agent-event.js";
import { describe, expect, it } from "vitest";
import { type DaemonProcess } from "../support/daemon-process.js";
import {
  type RecordedRequest,
  httpErrorReply,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { agentEvents, getRun, listRuns, runEvents, startRun } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

function taskOf(request: RecordedRequest): string {
  const user = request.body?.messages.find((message) => message.role === "user");
  return typeof user?.content === "string" ? user.content : "";
}

function toolResults(request: RecordedRequest): number {
  return request.body?.messages.filter((message) => message.role === "tool").length ?? 0;
}

async function metricsOf(daemon: DaemonProcess): Promise<string> {
  return (await fetch(`${daemon.url}/metrics`, { headers: daemon.headers() })).text();
}

const ROUND_USAGE = { promptTokens: 1_000, completionTokens: 500 };

describe("runs survive a kill -9 whole", () => {
  it("queues the queued runs again in order and keeps the usage a crashed run had spent", async () => {
    const llm = await kit.scriptedLlm();
    // slow-…: two rounds of 1,500 tokens each, then a call that never answers; quick-…: one answer.
    llm.setDefaultReply((request) => {
      if (!taskOf(request).startsWith("slow-"))
        return textReply("finished", { usage: { promptTokens: 10, completionTokens: 5 } });
      if (toolResults(request) < 2)
        return toolCallReply({ name: "read_file", arguments: { path: "notes.md" } }, { usage: ROUND_USAGE });
      return { type: "hang" };
    });
    const workspace = kit.project({ llmUrl: llm.url, config: { concurrency: 1 } });
    workspace.writeAgent("worker", { tools: ["read_file"], permissions: { allow: ["read_file"] } });
    const first = await kit.daemon(workspace.configFile);
    const slow = await startRun(first, "worker", "slow-0");
    const queued: string[] = [];
    for (const task of ["quick-1", "quick-2", "quick-3"]) queued.push(await startRun(first, "worker", task));
    await llm.waitForChatRequests(3);
    // The record keeps what each round spent as it goes, before the run ends.
    await waitFor(async () => {
      const run = await getRun(first, slow);
      return run.usage.total_tokens === 3_000 ? run : undefined;
    }, "the slow run's usage of two rounds in its record");
    for (const id of queued) expect((await getRun(first, id)).status).toBe("queued");
    await first.kill();

    const second = await kit.daemon(workspace.configFile);
    const crashed = await getRun(second, slow);
    expect(crashed).toMatchObject({ status: "failed", reason: "crashed" });
    expect(crashed.usage).toEqual({ prompt_tokens: 2_000, completion_tokens: 1_000, total_tokens: 3_000 });

    const finished = await waitFor(async () => {
      const runs = await Promise.all(queued.map((id) => getRun(second, id)));
      return runs.every((run) => run.status === "completed") ? runs : undefined;
    }, "the three queued runs to complete after the restart");
    const startedAt = finished.map((run) => run.started_at ?? "");
    expect([...startedAt].sort()).toEqual(startedAt);
    const tasksAfterRestart = llm.chatRequests.slice(3).map(taskOf);
    expect(tasksAfterRestart).toEqual(["quick-1", "quick-2", "quick-3"]);
  });

  it("counts the tokens of a call cut off by the budget, in the run and in the metrics", async () => {
    // About 4,000 tokens of text streamed without a usage report: the run's 2,000-token limit cuts it.
    const { project: workspace } = await kit.scriptedProject(
      textReply("word ".repeat(3_200), { chunkSize: 40 }),
    );
    workspace.writeAgent("spender", { limits: { max_tokens: 2_000 } });
    const daemon = await kit.daemon(workspace.configFile);
    const id = await startRun(daemon, "spender", "write a lot");
    const run = await waitFor(async () => {
      const record = await getRun(daemon, id);
      return record.status === "failed" ? record : undefined;
    }, "the run to be cut off");
    expect(run.reason).toBe("budget_exceeded");
    expect(run.usage.total_tokens).toBeGreaterThan(2_000);
    const metrics = await metricsOf(daemon);
    const completion = /agentd_llm_tokens_total\{agent="spender",kind="completion"\} (\d+)/.exec(metrics);
    expect(Number(completion?.[1])).toBe(run.usage.completion_tokens);
  });
});

// Timeouts count working time: test/app/daemon-clock.test.ts, on a clock moved by hand (the real
// 2 s windows these tests waited on could run out before the pause on a loaded machine).

describe("the circuit breaker per endpoint and model", () => {
  it("tries the fallback model when the first one's circuit is open, and leaves other models alone", async () => {
    const llm = await kit.scriptedLlm();
    llm.setDefaultReply((request) =>
      request.body?.model === "broken"
        ? httpErrorReply(500)
        : textReply(`answered by ${request.body?.model}`),
    );
    const workspace = kit.project({
      llmUrl: llm.url,
      config: {
        llm: {
          base_url: llm.url,
          api_key: "test-key",
          model: "scripted",
          retries: { max_attempts: 1, base_delay: 10 },
          circuit_breaker: { failure_threshold: 1, cooldown: "10m" },
        },
      },
    });
    workspace.writeAgent("flaky", { model: "broken", fallback_models: ["spare"] });
    workspace.writeAgent("healthy", { model: "steady" });
    const daemon = await kit.daemon(workspace.configFile);
    const completed = async (agent: string) => {
      const id = await startRun(daemon, agent, "answer");
      return waitFor(async () => {
        const run = await getRun(daemon, id);
        return run.status === "completed" || run.status === "failed" ? run : undefined;
      }, `the run of ${agent} to end`);
    };
    expect(await completed("flaky")).toMatchObject({ status: "completed", result: "answered by spare" });
    // broken's circuit is open now: the second run goes straight to spare.
    expect(await completed("flaky")).toMatchObject({ status: "completed", result: "answered by spare" });
    expect(await completed("healthy")).toMatchObject({ status: "completed", result: "answered by steady" });
    expect(llm.chatRequests.map((request) => request.body?.model)).toEqual([
      "broken",
      "spare",
      "spare",
      "steady",
    ]);
    expect((await listRuns(daemon)).every((run) => run.status === "completed")).toBe(true);
  });

  it("finds every run answered 202, its history and every state reported, after a kill -9 in the middle of a burst", async () => {
    const { project: workspace } = await kit.scriptedProject(
      { type: "hang" },
      { config: { concurrency: 20 } },
    );
    workspace.writeAgent("burst", { task: "answer", limits: { max_concurrent_runs: 100 } });
    const first = await kit.daemon(workspace.configFile);
    const accepted: string[] = [];
    let reported: Promise<AgentEvent[]> | undefined;
    const killed = new Promise<void>((resolve) => {
      // 80 POSTs at once; kill -9 once half are answered, with the others still in flight.
      for (let index = 0; index < 80; index++) {
        first
          .request("POST", "/agents/burst/runs", { task: `task ${index}` })
          .then((reply) => {
            if (reply.status === 202) accepted.push((reply.body as { run: string }).run);
            if (accepted.length === 40 && !reported) {
              reported = agentEvents(first, "burst");
              void reported.then(() => first.kill()).then(resolve);
            }
          })
          .catch(() => undefined);
      }
    });
    await killed;
    const statuses = (await reported) ?? [];
    const reportedRunning = new Set(
      statuses.flatMap((event) =>
        event.type === "status" && event.data.status === "running" && event.run ? [event.run] : [],
      ),
    );
    expect(accepted.length).toBeGreaterThanOrEqual(40);

    const second = await kit.daemon(workspace.configFile);
    const runs = new Map((await listRuns(second, "?limit=1000")).map((run) => [run.id, run]));
    for (const id of accepted) expect(runs.has(id), `run ${id} answered 202`).toBe(true);
    // Its history starts with the queued event reported before the kill, also for a run whose log
    // was not created yet (still queued: the restart writes it from the agent's log).
    const reportedQueued = new Map(
      statuses.flatMap((event) =>
        event.type === "status" && event.data.status === "queued" && event.run ? [[event.run, event]] : [],
      ),
    );
    expect(reportedQueued.size).toBeGreaterThan(0);
    for (const [id, queued] of reportedQueued) {
      const history = await runEvents(second, id);
      expect(history[0], `the history of run ${id}`).toEqual(queued);
    }
    // A run reported running had started: the restart finds it crashed, never queued again.
    for (const id of reportedRunning)
      expect(runs.get(id)).toMatchObject({ status: "failed", reason: "crashed" });
    // Event ids go on without a gap or a repeat.
    const ids = (await agentEvents(second, "burst")).map((event) => event.id);
    expect(ids).toEqual(ids.map((_, index) => (ids[0] ?? 1) + index));
  });
});
