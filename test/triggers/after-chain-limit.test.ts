import { describe, expect, it } from "vitest";
import { listRuns, startRun } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

interface TriggerStatus {
  agent: string;
  last_outcome: string | null;
  last_error: string | null;
  counts: { accepted: number; refused: number };
}

describe("a chain of after triggers", () => {
  it("runs 8 agents one after the other and starts no 9th, saying why", { timeout: 120_000 }, async () => {
    const { project } = await kit.scriptedProject(textReply("done"));
    project.writeAgent("step-0", {});
    for (let step = 1; step <= 9; step++) {
      project.writeAgent(`step-${step}`, { triggers: [{ after: { agent: `step-${step - 1}` } }] });
    }
    const daemon = await kit.daemon(project.configFile);
    await startRun(daemon, "step-0", "begin");
    const triggers = async () =>
      ((await daemon.request("GET", "/triggers")).body as { triggers: TriggerStatus[] }).triggers;
    const refused = await waitFor(async () => {
      const ninth = (await triggers()).find((trigger) => trigger.agent === "step-8");
      return ninth?.last_outcome === "refused" && ninth;
    }, "the ninth run refused");
    expect(refused.last_error).toMatch(/ends a chain of 8 runs/);
    expect(refused.counts).toMatchObject({ accepted: 0, refused: 1 });
    const ran = (await listRuns(daemon, "?limit=100")).map((run) => run.agent).sort();
    expect(ran).toEqual(["step-0", "step-1", "step-2", "step-3", "step-4", "step-5", "step-6", "step-7"]);
    // Each after trigger started its run once.
    const started = await triggers();
    for (let step = 1; step <= 7; step++) {
      expect(started.find((trigger) => trigger.agent === `step-${step}`)?.counts.accepted).toBe(1);
    }
  });
});
