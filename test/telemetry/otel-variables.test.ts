import { describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { getRun, startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

/** A daemon with `config` and `environment` that runs one agent once and stops: its run's trace id and its log. */
async function oneRun(
  config: Record<string, unknown>,
  environment: Record<string, string>,
): Promise<{ traceId: unknown; stderr: string }> {
  const { project } = await kit.scriptedProject(() => textReply("done"), { config });
  project.writeAgent("solo", {});
  const daemon = await kit.daemon(project.configFile, {
    environment: { OTEL_BSP_SCHEDULE_DELAY: "50", ...environment },
  });
  const run = await startRun(daemon, "solo", "go");
  await waitForRunEnd(daemon, run);
  const record = await getRun(daemon, run);
  daemon.signal("SIGTERM");
  await daemon.exited;
  return { traceId: record.trace_id, stderr: daemon.stderr() };
}

describe("the OTEL_* variables through a daemon", () => {
  it("turn traces off over config: OTEL_SDK_DISABLED, none, grpc", { timeout: 120_000 }, async () => {
    const receiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const config = { telemetry: { traces: { endpoint: receiver.url } } };
    const offSwitches: Array<Record<string, string>> = [
      { OTEL_SDK_DISABLED: "TRUE" },
      { OTEL_TRACES_EXPORTER: "none" },
    ];
    for (const environment of offSwitches) {
      const { traceId } = await oneRun(config, environment);
      expect(traceId, JSON.stringify(environment)).toBeUndefined();
    }
    const grpc = await oneRun(
      {},
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      },
    );
    expect(grpc.traceId).toBeUndefined();
    expect(grpc.stderr).toContain("only http/protobuf");
    expect(receiver.requests).toEqual([]);
  });

  it(
    "name the service and the resource, and send their headers; config's name wins",
    { timeout: 120_000 },
    async () => {
      const receiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const fromEnvironment = await oneRun(
        {},
        {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
          OTEL_SERVICE_NAME: "ops-agents",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=staging,team=a%20b",
          OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-tenant=t1",
        },
      );
      const span = await receiver.waitFor((spans) =>
        spans.find((one) => one.traceId === fromEnvironment.traceId),
      );
      expect(span.resource).toMatchObject({
        "service.name": "ops-agents",
        "deployment.environment": "staging",
        team: "a b",
      });
      expect(receiver.requests[0]?.headers["x-tenant"]).toBe("t1");
      const fromConfig = await oneRun(
        { telemetry: { traces: { endpoint: receiver.url, service_name: "from-config" } } },
        { OTEL_SERVICE_NAME: "ops-agents" },
      );
      const second = await receiver.waitFor((spans) =>
        spans.find((one) => one.traceId === fromConfig.traceId),
      );
      expect(second.resource["service.name"]).toBe("from-config");
    },
  );
});
