import { ROOT_CONTEXT, createContextKey, trace } from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SpanScope } from "../../src/telemetry/span-scope.js";

describe("a span's scope", () => {
  it("is its parent's context with the span set, the same context at every read", () => {
    const tracer = new BasicTracerProvider().getTracer("test");
    const key = createContextKey("parent's entry");
    const parent = ROOT_CONTEXT.setValue(key, "kept");
    const span = tracer.startSpan("execute_tool noop", {}, parent);
    const scope = new SpanScope({ tracer, parent, span, runId: "r_1", content: undefined });
    const context = scope.context;
    expect(trace.getSpan(context)).toBe(span);
    expect(context.getValue(key)).toBe("kept");
    expect(scope.context).toBe(context);
    expect(scope.runId).toBe("r_1");
    span.end();
  });
});
