import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { agentEvents, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

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
});
