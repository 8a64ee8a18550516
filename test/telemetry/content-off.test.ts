import { describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { runEvents, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

describe("traces without content", () => {
  it("carry no task, argument, output, answer or error text", { timeout: 120_000 }, async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    kit.defer(() => receiver.close());
    const reply = (request: RecordedRequest) => {
      const tools = (request.body?.tools ?? []).map((tool) => tool.function.name);
      if (!tools.includes("agent__helper")) return textReply("helper-answer-mark-5");
      const rounds = (request.body?.messages ?? []).filter((message) => message.role === "tool").length;
      switch (rounds) {
        case 0:
          return toolCallReply({ name: "shell", arguments: { command: "echo shell-output-mark-2" } });
        case 1:
          return toolCallReply({ name: "read_file", arguments: { path: "missing-path-mark-3.md" } });
        case 2:
          return toolCallReply({ name: "agent__helper", arguments: { task: "sub-task-mark-4" } });
        case 3:
          return toolCallReply({ name: "shell", arguments: { command: "exit 3 # failing-mark-7" } });
        default:
          return textReply("final-answer-mark-6");
      }
    };
    const { project } = await kit.scriptedProject(reply, {
      config: { telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("lead", {
      tools: ["shell", "read_file"],
      agents: ["helper"],
      permissions: { allow: ["shell", "read_file"] },
      workdir: "./work",
    });
    project.writeAgent("helper", { description: "Helps" });
    const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
    const started = await daemon.request("POST", "/agents/lead/runs", { task: "task-mark-1" });
    const { run } = started.body as { run: string };
    const record = await waitForRunEnd(daemon, run);
    expect(record.status, JSON.stringify(await runEvents(daemon, run))).toBe("completed");
    const spans = await receiver.waitFor((received) =>
      received.filter((span) => span.name.startsWith("invoke_agent ")).length === 2 ? received : undefined,
    );
    expect(
      spans.filter((span) => span.attributes["agentd.tool.outcome"] === "failed").length,
    ).toBeGreaterThan(0);
    const bodies = Buffer.concat(receiver.bodies).toString("latin1");
    const leaked = [
      "task-mark",
      "shell-output-mark",
      "missing-path-mark",
      "sub-task-mark",
      "helper-answer-mark",
      "final-answer-mark",
      "failing-mark",
    ].filter((mark) => bodies.includes(mark));
    expect(leaked).toEqual([]);
  });
});
