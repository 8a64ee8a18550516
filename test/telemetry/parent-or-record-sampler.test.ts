import { ROOT_CONTEXT, type SpanContext, SpanKind, TraceFlags, trace } from "@opentelemetry/api";
import { AlwaysOnSampler, ParentBasedSampler, SamplingDecision } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { ParentOrRecordSampler, defaultSampler } from "../../src/telemetry/parent-or-record-sampler.js";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const SPAN_ID = "b7ad6b7169203331";

function parent(spanContext: SpanContext) {
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

describe("the default sampler", () => {
  const parents = {
    "no parent": ROOT_CONTEXT,
    "an invalid parent": parent({ traceId: "0".repeat(32), spanId: SPAN_ID, traceFlags: TraceFlags.NONE }),
    "a sampled local parent": parent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED }),
    "an unsampled local parent": parent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.NONE }),
    "a sampled remote parent": parent({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    }),
    "an unsampled remote parent": parent({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    }),
  };

  it.each(Object.entries(parents))(
    "decides as the SDK's parent-based always-on sampler under %s",
    (_, context) => {
      const sdk = new ParentBasedSampler({ root: new AlwaysOnSampler() });
      const ours = new ParentOrRecordSampler();
      const expected = sdk.shouldSample(context, TRACE_ID, "chat bench", SpanKind.CLIENT, {}, []).decision;
      expect(ours.shouldSample(context).decision).toBe(expected);
    },
  );

  it("drops only what an unsampled parent says to drop", () => {
    const ours = new ParentOrRecordSampler();
    expect(ours.shouldSample(parents["an unsampled remote parent"]).decision).toBe(
      SamplingDecision.NOT_RECORD,
    );
    expect(ours.shouldSample(parents["no parent"]).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it("is installed only when OTEL_TRACES_SAMPLER asks for the default", () => {
    expect(defaultSampler({})).toBeInstanceOf(ParentOrRecordSampler);
    expect(defaultSampler({ OTEL_TRACES_SAMPLER: "parentbased_always_on" })).toBeInstanceOf(
      ParentOrRecordSampler,
    );
    expect(defaultSampler({ OTEL_TRACES_SAMPLER: "always_off" })).toBeUndefined();
    expect(defaultSampler({ OTEL_TRACES_SAMPLER: "traceidratio" })).toBeUndefined();
  });
});
