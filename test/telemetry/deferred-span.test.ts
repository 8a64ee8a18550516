import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { hrTimeDuration, hrTimeToMilliseconds } from "@opentelemetry/core";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { DeferredSpan } from "../../src/telemetry/deferred-span.js";
import { EndedSpans } from "../../src/telemetry/ended-spans.js";
import { KeptSpans } from "../support/kept-spans.js";

function setUp() {
  const kept = new KeptSpans();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(kept)] }).getTracer(
    "test",
  );
  const ended = new EndedSpans();
  const deferred = (name: string) =>
    new DeferredSpan({
      tracer,
      name,
      kind: SpanKind.CLIENT,
      parent: ROOT_CONTEXT,
      attributes: { "gen_ai.operation.name": "chat" },
      ended,
    });
  return { kept, ended, deferred };
}

describe("a deferred span", () => {
  it("reaches the SDK once handed over, with its attributes, status and the times it ran", () => {
    const { kept, ended, deferred } = setUp();
    const before = performance.now();
    const span = deferred("chat bench");
    span.setAttribute("gen_ai.usage.input_tokens", 100);
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    const after = performance.now();
    expect(kept.spans).toEqual([]);
    ended.handOver();
    expect(kept.spans).toHaveLength(1);
    const exported = kept.spans[0];
    if (exported === undefined) throw new Error("no span exported");
    expect(exported.name).toBe("chat bench");
    expect(exported.kind).toBe(SpanKind.CLIENT);
    expect(exported.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.usage.input_tokens": 100,
    });
    expect(exported.status.code).toBe(SpanStatusCode.ERROR);
    // Its own times, not the hand-over's: a duration within the time it was open.
    const duration = hrTimeToMilliseconds(hrTimeDuration(exported.startTime, exported.endTime));
    expect(duration).toBeGreaterThanOrEqual(0);
    expect(duration).toBeLessThanOrEqual(after - before);
  });

  it("starts at once when something needs it, and then ends at once", () => {
    const { kept, deferred } = setUp();
    const span = deferred("execute_tool noop");
    const started = span.started();
    expect(started.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.started()).toBe(started);
    span.setAttribute("agentd.tool.outcome", "ok");
    span.end();
    expect(kept.spans.map((exported) => exported.attributes["agentd.tool.outcome"])).toEqual(["ok"]);
  });

  it("waits with others until 64 have ended, handed over in the order they ended", () => {
    const { kept, deferred } = setUp();
    for (let index = 0; index < 63; index += 1) deferred(`chat ${index}`).end();
    expect(kept.spans).toEqual([]);
    deferred("chat 63").end();
    expect(kept.spans.map((exported) => exported.name)).toEqual(
      Array.from({ length: 64 }, (_, index) => `chat ${index}`),
    );
  });
});
