import { describe, expect, it } from "vitest";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RecordedRequest, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();

/**
 * The lead's model: two sub-agent calls side by side in round 0, then a shell call whose
 * `after_tool` hook fails (a log line written inside the call), then an answer. The helpers answer.
 */
function reply(request: RecordedRequest) {
  const tools = (request.body?.tools ?? []).map((tool) => tool.function.name);
  if (!tools.includes("agent__helper")) return textReply("helped");
  const round = (request.body?.messages ?? []).filter((message) => message.role === "assistant").length;
  if (round === 0)
    return toolCallReply([
      { name: "agent__helper", arguments: { task: "first task" }, id: "call_first" },
      { name: "agent__helper", arguments: { task: "second task" }, id: "call_second" },
    ]);
  if (round === 1) return toolCallReply({ name: "shell", arguments: { command: "true" }, id: "call_shell" });
  return textReply("done");
}

describe("a tool call's trace scope", () => {
  it(
    "parents side-by-side sub-agents on their own calls and tags log lines inside a call with its span",
    { timeout: 120_000 },
    async () => {
      const receiver: OtlpReceiver = await startOtlpReceiver();
      kit.defer(() => receiver.close());
      const { project } = await kit.scriptedProject(reply, {
        config: {
          telemetry: { traces: { endpoint: receiver.url, content: true } },
          log: { level: "info", pretty: false },
        },
      });
      project.writeAgent("lead", {
        tools: ["shell"],
        agents: ["helper"],
        permissions: { allow: ["shell"] },
        workdir: "./work-lead",
        hooks: { after_tool: { command: "exit 1", tools: ["shell"] } },
      });
      project.writeAgent("helper", { description: "Helps" });
      const daemon = await kit.daemon(project.configFile, { environment: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      const started = await daemon.request("POST", "/agents/lead/runs", { task: "delegate" });
      const { run } = started.body as { run: string };
      expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });

      const spans = await receiver.waitFor((received) =>
        received.some((span) => span.name === "invoke_agent lead") ? received : undefined,
      );
      const lead = spans.find((span) => span.name === "invoke_agent lead") as ReceivedSpan;
      const callSpan = (callId: string) => {
        const found = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === callId);
        if (found === undefined) throw new Error(`no span for ${callId}`);
        expect(found).toMatchObject({ traceId: lead.traceId, parentSpanId: lead.spanId });
        return found;
      };
      const helpers = spans.filter((span) => span.name === "invoke_agent helper");
      expect(helpers).toHaveLength(2);
      for (const [callId, task] of [
        ["call_first", "first task"],
        ["call_second", "second task"],
      ] as const) {
        const helper = helpers.find((span) => span.attributes["agentd.run.task"] === task);
        expect(helper?.parentSpanId, `${callId}'s child`).toBe(callSpan(callId).spanId);
      }

      // The hook's failure is logged inside the shell call: the line names that call's span.
      const shell = callSpan("call_shell");
      const hookLine = daemon
        .stderr()
        .split("\n")
        .find((line) => line.includes('"hook failed"') && line.includes(run));
      expect(hookLine).toBeDefined();
      expect(JSON.parse(hookLine as string)).toMatchObject({ trace_id: lead.traceId, span_id: shell.spanId });
    },
  );
});
