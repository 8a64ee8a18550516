import { type Context, type SpanContext, TraceFlags, isSpanContextValid, trace } from "@opentelemetry/api";
import { type Sampler, SamplingDecision, type SamplingResult } from "@opentelemetry/sdk-trace-base";

// One result of each kind for every span: the Tracer only reads them.
const RECORD_AND_SAMPLE: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
const DROP: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

/**
 * The SDK's default sampler (`parentbased_always_on`: every span recorded and exported, unless its
 * parent, local or remote, says it was not sampled), deciding the same way with less work per
 * span: the SDK's ParentBasedSampler checks the parent's ids again (the Tracer has just checked
 * them) and its AlwaysOnSampler makes a new result object for every span. Here the parent's ids
 * are checked only for a parent that says "not sampled" (an invalid parent means a root span,
 * which is sampled), and the results are shared.
 */
export class ParentOrRecordSampler implements Sampler {
  shouldSample(context: Context): SamplingResult {
    const parent: SpanContext | undefined = trace.getSpanContext(context);
    if (parent === undefined || (parent.traceFlags & TraceFlags.SAMPLED) !== 0) return RECORD_AND_SAMPLE;
    return isSpanContextValid(parent) ? DROP : RECORD_AND_SAMPLE;
  }

  toString(): string {
    return "ParentOrRecordSampler";
  }
}

/**
 * The sampler agentd installs: its own when `OTEL_TRACES_SAMPLER` asks for the default (unset, or
 * `parentbased_always_on`); otherwise none, so the SDK builds the one the variable names.
 */
export function defaultSampler(environment: NodeJS.ProcessEnv): Sampler | undefined {
  const configured = environment.OTEL_TRACES_SAMPLER?.trim();
  return configured === undefined || configured === "" || configured === "parentbased_always_on"
    ? new ParentOrRecordSampler()
    : undefined;
}
