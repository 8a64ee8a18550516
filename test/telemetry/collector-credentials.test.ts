import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const PASSWORD = "collector-pw-8c41e7";
const HEADER_KEY = "hc-team-key-3f9b62d0";
const kit = useTestKit();

describe("the collector's credentials in config", () => {
  it(
    "reach the collector and are masked like every config credential: in the log and in spans",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const endpoint = receiver.url.replace("http://", `http://agentd:${PASSWORD}@`);
      const { project } = await kit.scriptedProject(() => textReply(`the keys: ${HEADER_KEY} ${PASSWORD}`), {
        config: {
          telemetry: {
            traces: { endpoint, content: true, headers: { "x-honeycomb-team": HEADER_KEY } },
          },
          log: { level: "debug", pretty: false },
        },
      });
      project.writeAgent("talker", {});
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      const run = await startRun(daemon, "talker", `use ${HEADER_KEY}`);
      await waitForRunEnd(daemon, run);
      await receiver.waitFor((spans) => spans.find((span) => span.name === "invoke_agent talker"));
      expect(receiver.requests[0]?.headers).toMatchObject({
        "x-honeycomb-team": HEADER_KEY,
        authorization: `Basic ${Buffer.from(`agentd:${PASSWORD}`).toString("base64")}`,
      });
      expect(daemon.stderr()).toContain("exporting traces");
      const bodies = Buffer.concat(receiver.bodies).toString("latin1");
      for (const value of [PASSWORD, HEADER_KEY]) {
        expect(daemon.stderr()).not.toContain(value);
        expect(bodies).not.toContain(value);
      }
    },
  );

  it("leave a password of OTEL_EXPORTER_OTLP_ENDPOINT out of the log", { timeout: 60_000 }, async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const { project } = await kit.scriptedProject(() => textReply("done"));
    const daemon = await kit.daemon(project.configFile, {
      environment: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace("http://", `http://agentd:${PASSWORD}@`),
      },
    });
    expect(daemon.stderr()).toContain("exporting traces");
    expect(daemon.stderr()).toContain("agentd:***@127.0.0.1");
    expect(daemon.stderr()).not.toContain(PASSWORD);
  });
});
