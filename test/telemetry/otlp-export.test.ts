import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { openCoreTraces } from "../../src/telemetry/core-traces.js";
import { traceDestination } from "../../src/telemetry/trace-destination.js";
import { setRunScope, traceContextEnvironment, traceStep } from "../../src/telemetry/trace-scope.js";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";

const settings = (telemetry: unknown = {}) => ConfigSchema.parse({ telemetry }).telemetry;

describe("where traces go", () => {
  it("is off unless config or an OTEL_* variable names a destination", () => {
    expect(traceDestination(settings(), {})).toEqual({ off: true });
    expect(traceDestination(settings(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toMatchObject({
      url: "http://c:4318/v1/traces",
      serviceName: "agentd",
    });
    expect(
      traceDestination(settings(), {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/custom",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b,x=1",
        OTEL_SERVICE_NAME: "ops-agents",
      }),
    ).toMatchObject({
      url: "http://c:4318/custom",
      headers: { "api-key": "a b", x: "1" },
      serviceName: "ops-agents",
    });
    expect(traceDestination(settings(), { OTEL_TRACES_EXPORTER: "otlp" })).toMatchObject({
      url: "http://localhost:4318/v1/traces",
    });
  });

  it("takes config over the variables, and stays off when told to or asked for gRPC", () => {
    const configured = settings({ traces: { endpoint: "http://tempo:4318", content: true } });
    expect(traceDestination(configured, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://other:4318" })).toMatchObject({
      url: "http://tempo:4318/v1/traces",
      content: true,
    });
    expect(traceDestination(configured, { OTEL_SDK_DISABLED: "true" })).toEqual({ off: true });
    expect(traceDestination(configured, { OTEL_TRACES_EXPORTER: "none" })).toEqual({ off: true });
    expect(
      traceDestination(settings(), {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      }),
    ).toMatchObject({ off: true, warning: expect.stringContaining("grpc") });
    expect(() => settings({ traces: { endpoint: "http://c:4317", protocol: "grpc" } })).toThrow(/gRPC/);
  });
});

describe("the OTLP export", () => {
  let receiver: OtlpReceiver | undefined;
  afterEach(async () => receiver?.close());

  it("sends protobuf spans the official definitions decode, masked, and flushes on shutdown", async () => {
    receiver = await startOtlpReceiver();
    const traces = await openCoreTraces({
      settings: settings({ traces: { endpoint: receiver.url, headers: { "x-api-key": "k1" } } }),
      redact: (text) => text.replaceAll("hunter2-secret", "[secret:pw]"),
    });
    const runs = traces.runs;
    if (runs === undefined) throw new Error("traces should be on");
    let seen: Record<string, string> = {};
    const { signal } = new AbortController();
    setRunScope(signal, { tracer: runs.tracer, context: (await import("@opentelemetry/api")).ROOT_CONTEXT });
    await traceStep(
      "step hunter2-secret",
      { note: "pw=hunter2-secret", count: 3 },
      async () => {
        seen = traceContextEnvironment(signal);
      },
      signal,
    );
    await traces.shutdown();
    const [span] = await receiver.waitFor((spans) => (spans.length > 0 ? spans : undefined));
    expect(span).toMatchObject({
      name: "step [secret:pw]",
      attributes: { note: "pw=[secret:pw]", count: 3 },
      resource: { "service.name": "agentd" },
    });
    expect(seen.TRACEPARENT).toBe(`00-${span?.traceId}-${span?.spanId}-01`);
    expect(receiver.requests[0]).toMatchObject({ path: "/v1/traces", contentType: "application/x-protobuf" });
    expect(receiver.requests[0]?.headers["x-api-key"]).toBe("k1");
    expect(Buffer.concat(receiver.bodies).includes("hunter2-secret")).toBe(false);
  });
});
