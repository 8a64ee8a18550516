import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../src/config/config-schema.js";
import type { ToolExecutor } from "../../../src/tools/tool-executor.js";
import { LlmWorker } from "../../../src/workers/llm/llm-worker.js";
import { testClient } from "../../llm/client-settings.js";
import {
  startScriptedLlmServer,
  textReply,
  type ScriptedLlmServer,
} from "../../support/scripted-llm-server.js";
import { CliHarness } from "./cli-test-kit.js";

/** An agent without tools: the fallback only has to answer. */
const noTools: ToolExecutor = {
  specs: async () => [],
  execute: async () => ({ ok: false, code: "TOOL_NOT_FOUND", output: "no tools here" }),
};

let server: ScriptedLlmServer;
let harness: CliHarness;
beforeEach(async () => {
  server = await startScriptedLlmServer();
});
afterEach(async () => {
  harness.dispose();
  await server.close();
});

describe("falling back to the real LLM worker", () => {
  it("continues a task claude could not finish with the same task, system prompt and what claude produced", async () => {
    const llmWorker = new LlmWorker({
      model: testClient(server.url),
      tools: noTools,
      llm: ConfigSchema.parse({}).llm,
    });
    harness = new CliHarness({ scenario: "quota", llmFallback: llmWorker });
    server.enqueue(textReply("Release notes, written by the LLM."));

    const outcome = await harness.run({ tool: "claude" });

    expect(outcome).toMatchObject({
      status: "completed",
      result: "Release notes, written by the LLM.",
      worker: "cli:claude→llm",
    });
    const [request] = await server.waitForChatRequests(1);
    const messages = request?.body?.messages ?? [];
    expect(messages[0]).toMatchObject({ role: "system", content: "You write release notes." });
    const asked = messages.map((message) => String(message.content)).join("\n");
    expect(asked).toContain("Write the notes for today");
    expect(asked).toContain('The CLI tool "claude" could not finish this task');
    expect(asked).toContain("Let me start by reading the notes.");
    const types = harness.log.events.map((event) => event.type);
    expect(types.indexOf("fallback")).toBeGreaterThan(types.indexOf("error"));
    expect(types.at(-1)).toBe("result");
  });

  it("sends the fallback LLM the agent's model, never the CLI's cli.model", async () => {
    const llmWorker = new LlmWorker({
      model: testClient(server.url),
      tools: noTools,
      llm: ConfigSchema.parse({}).llm,
    });
    harness = new CliHarness({ scenario: "reconnect_loop", llmFallback: llmWorker });
    server.enqueue(textReply("Done by the fallback."));

    const outcome = await harness.run(
      // 3 s: node starts twice in the sandbox (the network bridge, then the fake) on a loaded machine.
      { tool: "codex", model: "gpt-5-codex", idle_timeout: "3s" },
      { model: "fallback-llm", timeout: 60_000 },
    );

    expect(outcome).toMatchObject({ status: "completed", worker: "cli:codex→llm" });
    const codexArguments = harness.recordedArguments().argv;
    expect(codexArguments[codexArguments.indexOf("-m") + 1]).toBe("gpt-5-codex");
    const [request] = await server.waitForChatRequests(1);
    expect(request?.body?.model).toBe("fallback-llm");
  });
});
