import { describe, expect, it } from "vitest";
import type { AgentSummary } from "../../src/api/api-services.js";
import { type DaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { listRuns } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

async function agentsOf(daemon: DaemonProcess): Promise<AgentSummary[]> {
  return ((await daemon.request("GET", "/agents")).body as { agents: AgentSummary[] }).agents;
}

// What a reload does to the next fire (added, changed, removed, time zones) is the scheduler's logic,
// tested on a manual clock in test/scheduler; this proves the wiring from the agent file to the
// daemon's timer, on the shortest real schedules.
describe("a seconds-level schedule under hot reload", () => {
  it("fires, follows an edit of the agent file, and stops when the file is deleted", async () => {
    const { project: workspace } = await kit.scriptedProject(textReply("tick done"));
    workspace.writeAgent("ticker", { schedule: "* * * * * *", task: "tick-before-edit" });
    const daemon = await kit.daemon(workspace.configFile);

    const [listed] = await agentsOf(daemon);
    expect(listed).toMatchObject({ id: "ticker", schedule: { cron: "* * * * * *" } });
    expect(Date.parse(listed?.next_fire ?? "")).toBeGreaterThan(Date.now() - 1_000);
    await waitFor(async () => {
      const runs = await listRuns(daemon, "?agent=ticker");
      return (
        runs.some((run) => run.task === "tick-before-edit" && run.trigger.kind === "schedule") || undefined
      );
    }, "a scheduled run");

    workspace.writeAgent("ticker", { schedule: { cron: "*/2 * * * * *", task: "tick-after-edit" } });
    await waitFor(async () => {
      const runs = await listRuns(daemon, "?agent=ticker");
      return runs.some((run) => run.task === "tick-after-edit") || undefined;
    }, "a run on the edited schedule");
    const [edited] = await agentsOf(daemon);
    expect(edited?.schedule?.cron).toBe("*/2 * * * * *");
    expect(new Date(edited?.next_fire ?? "").getUTCSeconds() % 2).toBe(0);

    workspace.removeAgent("ticker");
    await waitFor(async () => ((await agentsOf(daemon)).length === 0 ? true : undefined), "the agent to go");
    const settled = await waitFor(async () => {
      const runs = await listRuns(daemon, "?agent=ticker");
      return runs.every((run) => run.status === "completed") ? runs.length : undefined;
    }, "runs in flight to end");
    // Watch for longer than one period of the last schedule (2 s): no fire may start another run.
    const watchUntil = Date.now() + 2_500;
    while (Date.now() < watchUntil) {
      expect(await listRuns(daemon, "?agent=ticker")).toHaveLength(settled);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Each fire started one run, named for its own second.
    const fires = (await listRuns(daemon, "?agent=ticker")).map((run) =>
      "scheduled_for" in run.trigger ? run.trigger.scheduled_for : "",
    );
    expect(new Set(fires).size).toBe(fires.length);
    for (const fire of fires) expect(new Date(fire).getUTCMilliseconds()).toBe(0);
  });
});
