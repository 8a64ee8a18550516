import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { textReply } from "../support/scripted-llm-server.js";
import { agentEvents, getRun, listRuns } from "./api-shapes.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

// How many fires were missed, and what each on_missed does, is the scheduler's logic, tested on a
// manual clock in test/scheduler; this proves the wiring: a restarted daemon reads how far its fires
// went and reports (and runs) the ones it missed, on the shortest real schedule, every second.
describe("schedule fires missed while the daemon was down", () => {
  it(
    "run once at start under on_missed: run_once and are recorded as missed under skip",
    { timeout: 90_000 },
    async () => {
      const { project: workspace } = await kit.scriptedProject(textReply("done"));
      workspace.writeAgent("catch-up", {
        schedule: { cron: "* * * * * *", on_missed: "run_once", task: "tick" },
      });
      workspace.writeAgent("skipper", { schedule: { cron: "* * * * * *", on_missed: "skip", task: "tick" } });
      const first = await kit.daemon(workspace.configFile);
      for (const agent of ["catch-up", "skipper"]) {
        await waitFor(
          async () => ((await listRuns(first, `?agent=${agent}`)).length > 0 ? true : undefined),
          agent,
        );
      }
      await first.kill();
      const downSince = Date.now();
      // The daemon stays down across at least one fire of the every-second schedule.
      await waitFor(async () => (Date.now() - downSince > 1_200 ? true : undefined), "downtime");

      const second = await kit.daemon(workspace.configFile);
      const missedOf = async (agent: string) =>
        waitFor(async () => {
          const events = await agentEvents(second, agent);
          return events.find(
            // Of the second daemon: the first may have caught up fires it woke late for.
            (event): event is Extract<AgentEvent, { type: "missed" }> =>
              event.type === "missed" && Date.parse(event.time) >= downSince,
          );
        }, `a missed event of ${agent}`);

      const caughtUp = await missedOf("catch-up");
      expect(caughtUp.data.on_missed).toBe("run_once");
      // Down for 1.2 s or more on an every-second schedule: the event counts every fire missed.
      const downSeconds = (Date.parse(caughtUp.time) - downSince) / 1000;
      expect(caughtUp.data.count).toBeGreaterThanOrEqual(1);
      expect(caughtUp.data.count).toBeLessThanOrEqual(Math.ceil(downSeconds) + 1);
      expect(Date.parse(caughtUp.data.scheduled_for)).toBeGreaterThanOrEqual(downSince - 1_000);
      const catchUpRun = await getRun(second, caughtUp.data.run ?? "");
      // The run's record says how many fires it stands for, as the event does.
      expect(catchUpRun.trigger).toEqual({
        kind: "missed",
        scheduled_for: caughtUp.data.scheduled_for,
        fires: caughtUp.data.count,
      });
      // One catch-up run of the second daemon for the downtime (a loaded machine that wakes late
      // may catch up the fires it woke too late for with another: the first daemon before the
      // kill, or the second after its start, of later fires).
      const missedRuns = (await listRuns(second, "?agent=catch-up")).filter(
        (run) =>
          run.trigger.kind === "missed" &&
          Date.parse(run.created_at) >= downSince &&
          run.trigger.scheduled_for <= caughtUp.data.scheduled_for,
      );
      expect(missedRuns.map((run) => run.id)).toEqual([catchUpRun.id]);

      const skipped = await missedOf("skipper");
      expect(skipped.data).toMatchObject({ on_missed: "skip" });
      expect(skipped.data.run).toBeUndefined();
      const skipperRuns = await listRuns(second, "?agent=skipper");
      expect(skipperRuns.filter((run) => run.trigger.kind === "missed")).toHaveLength(0);
    },
  );
});
