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
import { getRun, runEvents, startRun } from "../daemon/api-shapes.js";

const kit = useTestKit();

/** Eight distinct notifications in one answer: a model steered by what it read. */
function eightNotifications(round: string): ScriptedReplyValue {
  return toolCallReply(
    Array.from({ length: 8 }, (_, index) => ({
      name: "notify",
      arguments: { message: `${round}: ping ${index}` },
    })),
  );
}

function answers(request: RecordedRequest): number {
  return (request.body?.messages ?? []).filter((message) => message.role === "assistant").length;
}

describe("the notify tool across a restart of the daemon", () => {
  it("a run killed -9 and resumed from its checkpoint sends no more than 10 in all", async () => {
    const chat = await recordingReceiver(kit);
    const { llm, project } = await kit.scriptedProject(undefined);
    project.writeAgent("monitor", {
      resume: true,
      deliver: [{ to: "discord", url: `${chat.url}/api/webhooks/1/discord`, when: ["agent"] }],
    });
    // Before the crash: eight notifications, then an answer that never comes.
    llm.setDefaultReply((request) =>
      answers(request) === 0 ? eightNotifications("before") : { type: "hang" },
    );
    let daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "monitor", "watch the page");
    await llm.waitForChatRequests(2, 30_000);
    await waitFor(() => chat.received.length >= 8, "the first eight notifications");
    await daemon.kill();

    // Resumed after round 1: eight more asked for, of which only two may go.
    llm.setDefaultReply((request) =>
      answers(request) === 1 ? eightNotifications("after") : textReply("done"),
    );
    daemon = await kit.daemon(project.configFile);
    const record = await waitFor(
      async () => {
        const current = await getRun(daemon, run);
        return current.ended_at ? current : undefined;
      },
      `run ${run} to end`,
      30_000,
    );
    expect(record).toMatchObject({ status: "completed", result: "done" });
    const observations = (await runEvents(daemon, run)).flatMap((event) =>
      event.type === "observation" ? [event.data as { ok: boolean; output: string }] : [],
    );
    expect(observations.filter((observation) => observation.ok)).toHaveLength(10);
    expect(
      observations.filter((observation) => observation.output.includes("10 notifications")),
    ).toHaveLength(6);
    const stored = (await daemon.request("GET", `/deliveries?run=${run}`)).body as { deliveries: unknown[] };
    expect(stored.deliveries).toHaveLength(10);
    // A delivery sent just before the kill, but not yet marked sent, goes again (at least once):
    // ten distinct notifications reach the channel.
    const distinct = () => new Set(chat.received.map((request) => request.body)).size;
    await waitFor(() => distinct() >= 10, "the notifications allowed");
    expect(distinct()).toBe(10);
  }, 120_000);
});
