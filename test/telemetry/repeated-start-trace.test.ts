import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("a run start repeated with its Idempotency-Key", () => {
  it("answers the first start's trace id too", { timeout: 60_000 }, async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const { project } = await kit.scriptedProject(() => textReply("done"), {
      config: { telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("once", {});
    const daemon = await kit.daemon(project.configFile);
    const start = async () => {
      const reply = await fetch(`${daemon.url}/agents/once/runs`, {
        method: "POST",
        headers: { ...daemon.headers(), "content-type": "application/json", "idempotency-key": "ci-job-42" },
        body: JSON.stringify({ task: "go" }),
      });
      return { status: reply.status, body: (await reply.json()) as Record<string, unknown> };
    };
    const first = await start();
    expect(first).toMatchObject({ status: 202, body: { trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    // The caller retried (its answer was lost): the same run, and where to find its trace.
    expect(await start()).toMatchObject({
      status: 200,
      body: { run: first.body.run, duplicate: true, trace_id: first.body.trace_id },
    });
  });
});
