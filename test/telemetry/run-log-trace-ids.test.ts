import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { listRuns, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("a traced run's log lines", () => {
  it(
    "carry its trace id, a sub-agent's too, to the line that says the run ended",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const reply = (request: RecordedRequest) => {
        const tools = (request.body?.tools ?? []).map((tool) => tool.function.name);
        if (!tools.includes("agent__helper"))
          return (request.body?.messages ?? []).some((message) => message.role === "tool")
            ? textReply("helped")
            : toolCallReply({ name: "shell", arguments: { command: "exit 4" }, id: "helper_shell" });
        const rounds = (request.body?.messages ?? []).filter((message) => message.role === "tool").length;
        return rounds === 0
          ? toolCallReply({ name: "agent__helper", arguments: { task: "help" }, id: "call_helper" })
          : textReply("done");
      };
      const { project } = await kit.scriptedProject(reply, {
        config: {
          telemetry: { traces: { endpoint: receiver.url } },
          log: { level: "debug", pretty: false },
        },
      });
      project.writeAgent("lead", { agents: ["helper"] });
      project.writeAgent("helper", {
        description: "Helps",
        tools: ["shell"],
        permissions: { allow: ["shell"] },
        workdir: "./work",
      });
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      const started = await daemon.request("POST", "/agents/lead/runs", { task: "delegate" });
      const { run, trace_id } = started.body as { run: string; trace_id: string };
      expect(trace_id).toMatch(/^[0-9a-f]{32}$/);
      await waitForRunEnd(daemon, run);
      const runs = await listRuns(daemon);
      const helper = runs.find((record) => record.agent === "helper");
      expect(runs.find((record) => record.id === run)?.trace_id).toBe(trace_id);
      expect(helper?.trace_id).toBe(trace_id);
      const lines = daemon
        .stderr()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const about = (id: string) => lines.filter((line) => line.run === id);
      for (const id of [run, helper?.id ?? "none"]) {
        expect(about(id).length, id).toBeGreaterThan(0);
        expect(
          about(id).filter((line) => line.trace_id !== trace_id),
          id,
        ).toEqual([]);
      }
    },
  );
});
