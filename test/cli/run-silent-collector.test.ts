import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const kit = useTestKit();

describe("agentd run with a collector that never answers", () => {
  it("ends once its run has, its last export given up after the bound", { timeout: 90_000 }, async () => {
    const silent = createServer((request) => request.resume());
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    kit.defer(async () => {
      silent.closeAllConnections();
      silent.close();
      await once(silent, "close");
    });
    const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const { project } = await kit.scriptedProject(() => textReply("done"), {
      config: { log: { level: "silent" }, telemetry: { traces: { endpoint } } },
    });
    project.writeAgent("quick", { task: "say done" });
    const started = Date.now();
    // Without the bound, the one export would keep the process for the minute it may take.
    const ran = await agentd(["run", "quick"], {
      cwd: project.root,
      environment: { OTEL_EXPORTER_OTLP_TIMEOUT: "60000" },
    });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(40_000);
  });
});
