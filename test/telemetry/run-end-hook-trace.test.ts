import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("an on_run_end hook of a traced run", () => {
  it("gets the run's span as TRACEPARENT, and is an event of it", { timeout: 120_000 }, async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const { project } = await kit.scriptedProject(() => textReply("done"), {
      config: { telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("ender", {
      workdir: "./work",
      hooks: { on_run_end: 'printf "%s" "$TRACEPARENT" > end-traceparent.txt' },
    });
    const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
    const run = await startRun(daemon, "ender", "finish");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    const span = await receiver.waitFor((spans) => spans.find((one) => one.name === "invoke_agent ender"));
    expect(readFileSync(path.join(project.root, "work", "end-traceparent.txt"), "utf8")).toBe(
      `00-${span.traceId}-${span.spanId}-01`,
    );
    expect(span.events.map((event) => event.name)).toContain("agentd.hook.ok");
  });
});
