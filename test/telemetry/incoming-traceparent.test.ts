import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitForRunEnd } from "../daemon/api-shapes.js";

const SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const kit = useTestKit();

/**
 * `traceparent` on POST /agents/:id/runs comes from whoever may start runs: one that is not a valid
 * W3C trace context is ignored (the run starts its own trace), never refused, never copied into the
 * run's record or spans, and never able to make a run a child of the all-zero (invalid) trace.
 */
describe("a traceparent that is malformed or huge", { timeout: 120_000 }, () => {
  it("starts the run in a trace of its own, and nothing of the header leaves the daemon", async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const { project } = await kit.scriptedProject(textReply("done"), {
      config: { vault: { backend: "env" }, telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("worker", {});
    const daemon = await kit.daemon(project.configFile, {
      environment: { OTEL_BSP_SCHEDULE_DELAY: "50", AGENTD_SECRET_CALLER: SECRET },
    });
    const headers: Record<string, string> = {
      "not hex": "00-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-yyyyyyyyyyyyyyyy-01",
      "all-zero trace": `00-${"0".repeat(32)}-${"1".repeat(16)}-01`,
      "all-zero span": `00-${"2".repeat(32)}-${"0".repeat(16)}-01`,
      "version ff": `ff-${"3".repeat(32)}-${"4".repeat(16)}-01`,
      "upper case": `00-${"A".repeat(32)}-${"B".repeat(16)}-01`,
      "huge tail": `00-${"5".repeat(32)}-${"6".repeat(16)}-01-${"x".repeat(8_000)}`,
      "two contexts": `00-${"7".repeat(32)}-${"8".repeat(16)}-01,00-${SECRET}-${"9".repeat(16)}-01`,
    };
    const runs = new Map<string, { run: string; trace_id: string }>();
    for (const [name, traceparent] of Object.entries(headers)) {
      const response = await fetch(`${daemon.url}/agents/worker/runs`, {
        method: "POST",
        headers: { ...daemon.headers(), "content-type": "application/json", traceparent },
        body: JSON.stringify({ task: name }),
      });
      expect(response.status, name).toBe(202);
      runs.set(name, (await response.json()) as { run: string; trace_id: string });
    }
    const traceIds = new Set<string>();
    for (const [name, { run, trace_id }] of runs) {
      expect(trace_id, name).toMatch(/^[0-9a-f]{32}$/);
      expect(trace_id, name).not.toMatch(/^0+$|^2+$|^3+$|^5+$|^7+$/);
      expect(trace_id, name).not.toBe(SECRET);
      traceIds.add(trace_id);
      expect((await waitForRunEnd(daemon, run)).trace_id).toBe(trace_id);
    }
    // Each its own trace, and each run's span the root of it.
    expect(traceIds.size).toBe(runs.size);
    const roots = await receiver.waitFor((spans) => {
      const invoked = spans.filter((span) => span.name === "invoke_agent worker");
      return invoked.length === runs.size ? invoked : undefined;
    });
    for (const span of roots) {
      expect(traceIds.has(span.traceId)).toBe(true);
      expect(span.parentSpanId).toBe("");
    }
    expect(receiver.bodies.some((body) => body.toString("latin1").includes("x".repeat(100)))).toBe(false);
  });
});
