import { expect } from "vitest";
import type { OtlpReceiver } from "./otlp-receiver.js";

/**
 * Waits for the span of `agent`'s resumed run and checks it goes on in the trace its record named,
 * under the run's first span, and that nothing of the run started a trace of its own.
 */
export async function expectResumedInTrace(
  receiver: OtlpReceiver,
  expected: { agent: string; run: string; traceId: string | undefined; firstSpanId: string | undefined },
): Promise<void> {
  const resumed = await receiver.waitFor((spans) =>
    spans.find(
      (span) =>
        span.name === `invoke_agent ${expected.agent}` && span.attributes["agentd.run.resumed"] === true,
    ),
  );
  expect(resumed).toMatchObject({
    traceId: expected.traceId,
    parentSpanId: expected.firstSpanId,
    attributes: { "agentd.run.id": expected.run, "agentd.run.status": "completed" },
  });
  const spans = await receiver.waitFor((received) =>
    received.some((span) => span.parentSpanId === resumed.spanId && span.name.startsWith("chat "))
      ? received
      : undefined,
  );
  expect(
    spans.filter((span) => span.name.startsWith("invoke_agent") && span.traceId !== expected.traceId),
  ).toEqual([]);
}
