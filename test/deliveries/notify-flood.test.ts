import { describe, expect, it } from "vitest";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { agentEvents, listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("the notify tool in a hostile run", () => {
  it("sends at most 10 notifications per run, however many calls one answer makes", async () => {
    const chat = await recordingReceiver(kit);
    const { llm, project } = await kit.scriptedProject(undefined);
    // A model steered by a page it read: 40 distinct messages in one answer, so no loop is seen.
    llm.enqueue(
      toolCallReply(
        Array.from({ length: 40 }, (_, index) => ({
          name: "notify",
          arguments: { message: `ping ${index}` },
        })),
      ),
    );
    llm.setDefaultReply(textReply("done"));
    project.writeAgent("monitor", {
      deliver: [{ to: "discord", url: `${chat.url}/api/webhooks/1/discord`, when: ["agent"] }],
    });
    const daemon = await kit.daemon(project.configFile);

    const run = await startRun(daemon, "monitor", "watch the page");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    await waitFor(() => chat.received.length >= 10, "the notifications allowed");
    const observations = (await agentEvents(daemon, "monitor")).flatMap((event) =>
      event.type === "observation" && event.run === run
        ? [event.data as { ok: boolean; output: string }]
        : [],
    );
    expect(observations.filter((observation) => observation.ok)).toHaveLength(10);
    expect(observations[10]).toMatchObject({ ok: false });
    expect(observations[10]?.output).toContain("10 notifications");
    const stored = (await daemon.request("GET", `/deliveries?run=${run}`)).body as { deliveries: unknown[] };
    expect(stored.deliveries).toHaveLength(10);
    expect(chat.received.length).toBe(10);
  });

  it("counts the notifications of a run's sub-agents toward the same 10", async () => {
    const chat = await recordingReceiver(kit);
    // The lead starts three monitors side by side; each tries to send five notifications.
    const reply = (request: RecordedRequest): ScriptedReplyValue => {
      const messages = request.body?.messages ?? [];
      const task = String(messages[1]?.content ?? "");
      const answered = messages.some((message) => message.role === "tool");
      if (task === "fan out")
        return answered
          ? textReply("done")
          : toolCallReply(
              Array.from({ length: 3 }, (_, index) => ({
                name: "agent__monitor",
                arguments: { task: `watch ${index}` },
              })),
            );
      if (answered) return textReply("watched");
      return toolCallReply(
        Array.from({ length: 5 }, (_, index) => ({
          name: "notify",
          arguments: { message: `${task}: ping ${index}` },
        })),
      );
    };
    const { project } = await kit.scriptedProject(reply, { config: { concurrency: 4 } });
    project.writeAgent("monitor", {
      deliver: [{ to: "discord", url: `${chat.url}/api/webhooks/1/discord`, when: ["agent"] }],
      limits: { max_concurrent_runs: 3 },
    });
    project.writeAgent("lead", { agents: ["monitor"] });
    const daemon = await kit.daemon(project.configFile);

    const run = await startRun(daemon, "lead", "fan out");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    const children = await listRuns(daemon, `?parent=${run}`);
    expect(children).toHaveLength(3);
    await waitFor(() => chat.received.length >= 10, "the notifications allowed");
    const sent = (await agentEvents(daemon, "monitor")).flatMap((event) =>
      event.type === "observation" && (event.data as { ok: boolean }).ok ? [event] : [],
    );
    expect(sent).toHaveLength(10);
    let delivered = 0;
    for (const child of children) {
      const stored = (await daemon.request("GET", `/deliveries?run=${child.id}`)).body as {
        deliveries: unknown[];
      };
      delivered += stored.deliveries.length;
    }
    expect(delivered).toBe(10);
    expect(chat.received.length).toBe(10);
  });
});
