import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { type ScriptedLlmServer, textReply } from "../support/scripted-llm-server.js";
import { agentEvents, listRuns, runEvents, startRun } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/** Tasks named slow-… never get an answer, so their runs are still going when the daemon dies. */
async function scriptedLlm(): Promise<ScriptedLlmServer> {
  const llm = await kit.scriptedLlm();
  llm.setDefaultReply((request) =>
    JSON.stringify(request.body?.messages ?? []).includes("slow-") ? { type: "hang" } : textReply("finished"),
  );
  return llm;
}

describe("the daemon after kill -9", () => {
  it("keeps every reported event and finished run, fails interrupted runs as crashed, and continues ids", async () => {
    const llm = await scriptedLlm();
    const workspace = kit.project({
      llmUrl: llm.url,
      config: { concurrency: 10, limits: { max_concurrent_runs: 10 } },
    });
    workspace.writeAgent("batch", {});
    const first = await kit.daemon(workspace.configFile);
    const tasks = Array.from({ length: 10 }, (_, index) =>
      index % 2 === 0 ? `quick-${index}` : `slow-${index}`,
    );
    const runIds = new Map<string, string>();
    for (const task of tasks) runIds.set(task, await startRun(first, "batch", task));

    const before = await waitFor(async () => {
      const runs = await listRuns(first, "?agent=batch");
      const settled = runs.every((run) =>
        run.task.startsWith("quick-") ? run.status === "completed" : run.status === "running",
      );
      return runs.length === 10 && settled ? runs : undefined;
    }, "5 runs completed and 5 running");
    await llm.waitForChatRequests(10);
    const reported = await agentEvents(first, "batch");
    const reportedRunLogs = new Map<string, AgentEvent[]>();
    for (const run of before) reportedRunLogs.set(run.id, await runEvents(first, run.id));
    await first.kill();

    const second = await kit.daemon(workspace.configFile);
    const after = await agentEvents(second, "batch");
    expect(after.slice(0, reported.length)).toEqual(reported);
    expect(after.map((event) => event.id)).toEqual(after.map((_, index) => index + 1));

    const lastReportedId = reported.at(-1)?.id ?? 0;
    const crashEvents = after.filter(
      (event) => event.type === "status" && event.data.status === "failed" && event.id > lastReportedId,
    );
    expect(crashEvents).toHaveLength(5);
    for (const event of crashEvents) expect(event.data).toMatchObject({ reason: "crashed" });

    const runsAfter = await listRuns(second, "?agent=batch");
    for (const run of runsAfter) {
      const wasBefore = before.find((old) => old.id === run.id);
      if (run.task.startsWith("quick-")) {
        expect(run).toEqual(wasBefore);
        expect(run.result).toBe("finished");
      } else {
        expect(run).toMatchObject({ status: "failed", reason: "crashed" });
      }
      const log = await runEvents(second, run.id);
      expect(log.slice(0, reportedRunLogs.get(run.id)?.length)).toEqual(reportedRunLogs.get(run.id));
    }

    const next = await startRun(second, "batch", "quick-after-restart");
    const afterRestart = await waitFor(async () => {
      const events = await agentEvents(second, "batch", after.at(-1)?.id ?? 0);
      return events.some((event) => event.run === next && event.type === "status") ? events : undefined;
    }, "an event of the new run");
    expect(afterRestart[0]?.id).toBe((after.at(-1)?.id ?? 0) + 1);
  });
});
