import { afterEach, describe, expect, it } from "vitest";
import { agentdBin } from "../support/agentd-cli.js";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import {
  type ScriptedLlmServer,
  startScriptedLlmServer,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { createTempProject, type TempProject } from "../support/temp-project.js";

/**
 * `agentd run`'s bundle carries its own copy of the OpenTelemetry API (scripts/bundle-cli.mjs); the
 * SDK it loads from node_modules when traces are on has the package's. The two must make one trace:
 * spans the bundle starts under a parent the SDK made, and the SDK's provider behind the bundle's API.
 */
describe("agentd run's traces, from its bundle", () => {
  let llm: ScriptedLlmServer | undefined;
  let receiver: OtlpReceiver | undefined;
  let project: TempProject | undefined;
  afterEach(async () => {
    await llm?.close();
    await receiver?.close();
    project?.remove();
  });

  it("exports the run's span with its model calls and tool call under it", { timeout: 60_000 }, async () => {
    llm = await startScriptedLlmServer();
    receiver = await startOtlpReceiver();
    project = createTempProject({
      llmUrl: llm.url,
      config: { log: { level: "silent" }, telemetry: { traces: { endpoint: receiver.url } } },
    });
    project.writeAgent("reader", {
      task: "Read x",
      tools: ["read_file"],
      permissions: { allow: ["read_file"] },
    });
    llm.enqueue(toolCallReply({ name: "read_file", arguments: { path: "x" } }), textReply("done"));

    const { exitCode, all } = await agentdBin(["run", "reader"], { cwd: project.root });
    expect(exitCode, all).toBe(0);

    // The run flushes its spans before it exits.
    const spans = receiver.spans;
    const run = spans.find((span) => span.name === "invoke_agent reader");
    expect(run, JSON.stringify(spans.map((span) => span.name))).toBeDefined();
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    const tools = spans.filter((span) => span.name === "execute_tool read_file");
    expect(chats).toHaveLength(2);
    expect(tools).toHaveLength(1);
    for (const span of [...chats, ...tools]) {
      expect(span.traceId).toBe(run?.traceId);
      expect(span.parentSpanId).toBe(run?.spanId);
    }
  });
});
