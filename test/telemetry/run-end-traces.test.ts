import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, type ScriptedReplyValue, textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("the span of a run that did not complete", () => {
  it("says how it ended: stopped by a person, failed by its model", { timeout: 120_000 }, async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const reply = (request: RecordedRequest): ScriptedReplyValue => {
      const system = JSON.stringify(request.body?.messages?.[0] ?? "");
      if (system.includes("stopped-agent")) return { type: "hang" };
      if (system.includes("failing-agent"))
        return { type: "http_error", status: 400, message: "bad request" };
      return textReply("fine");
    };
    const { llm, project } = await kit.scriptedProject(reply, {
      config: { telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("stopped.md", "---\ndescription: stopped\n---\nYou are stopped-agent.\n");
    project.writeAgent("failing.md", "---\ndescription: failing\n---\nYou are failing-agent.\n");
    const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
    const stopped = await startRun(daemon, "stopped", "wait");
    const failing = await startRun(daemon, "failing", "fail");
    await llm.waitForChatRequests(2, 30_000);
    expect((await daemon.request("POST", `/runs/${stopped}/stop`)).status).toBe(200);
    const stoppedRecord = await waitForRunEnd(daemon, stopped);
    const failedRecord = await waitForRunEnd(daemon, failing);
    const spans = await receiver.waitFor((received) =>
      received.filter((span) => span.name.startsWith("invoke_agent ")).length === 2 ? received : undefined,
    );
    const runSpan = (agent: string) => spans.find((span) => span.name === `invoke_agent ${agent}`);
    expect(runSpan("stopped")).toMatchObject({
      attributes: {
        "agentd.run.status": "stopped",
        "agentd.run.reason": stoppedRecord.reason,
        "agentd.run.trigger": "api",
      },
    });
    expect(stoppedRecord.reason).toBe("user_stop");
    expect(runSpan("failing")).toMatchObject({
      attributes: { "agentd.run.status": "failed", "agentd.run.reason": failedRecord.reason },
      status: { code: 2 },
    });
    const failedChat = spans.find(
      (span) => span.name.startsWith("chat ") && span.parentSpanId === runSpan("failing")?.spanId,
    );
    expect(failedChat).toMatchObject({
      attributes: { "error.type": expect.any(String) },
      status: { code: 2 },
    });
  });
});
