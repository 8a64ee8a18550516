import { describe, expect, it } from "vitest";
import { startRun } from "../daemon/api-shapes.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import type { RecordedRequest, ScriptedReplyValue } from "../support/scripted-llm-server.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/** The planner hands the deploy to its sub-agent, which asks a human first. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const body = request.body;
  if (body?.messages.at(-1)?.role === "tool") return textReply("done");
  if (body?.tools?.some((tool) => tool.function.name === "agent__deployer") ?? false) {
    return toolCallReply({ name: "agent__deployer", arguments: { task: "deploy" } });
  }
  return toolCallReply({ name: "ask_human", arguments: { question: "Deploy to production now?" } });
}

interface Delivery {
  agent: string;
  run: string;
  when: string;
  status: string;
}

describe("a sub-agent waiting for a human", () => {
  it(
    "is told to the waiting targets of the run it belongs to, with a link to where to answer",
    { timeout: 120_000 },
    async () => {
      const chat = await recordingReceiver(kit);
      const { project } = await kit.scriptedProject(reply);
      project.writeAgent("planner", {
        agents: ["deployer"],
        deliver: [{ to: "slack", url: `${chat.url}/planner`, when: ["waiting"] }],
      });
      project.writeAgent("deployer", {
        tools: ["ask_human"],
        deliver: [{ to: "slack", url: `${chat.url}/deployer`, when: ["waiting"] }],
      });
      const daemon = await kit.daemon(project.configFile);
      const run = await startRun(daemon, "planner", "ship it");
      const [told] = await waitFor(() => chat.received.length > 0 && chat.received, "the waiting delivery");
      const [question] = (
        (await daemon.request("GET", "/questions")).body as { questions: Array<{ run: string }> }
      ).questions;
      expect(question?.run).not.toBe(run);
      expect(told?.path).toBe("/planner");
      const text = (JSON.parse(told?.body ?? "{}") as { text: string }).text;
      expect(text).toContain("planner is waiting for an answer");
      expect(text).toContain(
        `an answer to "Deploy to production now?" (asked by its sub-agent deployer, run ${question?.run})`,
      );
      expect(text).toContain(`/#/runs/${question?.run}|`);
      const listed = ((await daemon.request("GET", "/deliveries")).body as { deliveries: Delivery[] })
        .deliveries;
      // The sub-agent's own targets deliver nothing: its run is part of the planner's.
      expect(listed.map((delivery) => [delivery.agent, delivery.run, delivery.when])).toEqual([
        ["planner", run, "waiting"],
      ]);
    },
  );
});
