import { describe, expect, it } from "vitest";
import { httpErrorReply, textReply, toolCallReply } from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { LoopHarness } from "./loop-harness.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

describe("LlmWorker", () => {
  it("thinks, acts through the executor, observes and answers", async () => {
    const definition = makeDefinition({ id: "notes", systemPrompt: "You write notes." });
    const harness = new LoopHarness(server, {
      definition,
      task: "Say hello",
      llm: { prices: { "test-model": { input: 1, output: 2 } } },
    });
    server.enqueue(
      toolCallReply(
        { name: "echo", arguments: { text: "hello" } },
        {
          text: "I will echo first.",
          usage: { promptTokens: 100, completionTokens: 20 },
        },
      ),
      textReply("The tool said: echo: hello", { usage: { promptTokens: 150, completionTokens: 10 } }),
    );

    const outcome = await harness.run();

    expect(outcome).toMatchObject({
      status: "completed",
      result: "The tool said: echo: hello",
      worker: "llm",
    });
    expect(outcome.usage).toEqual({ prompt_tokens: 250, completion_tokens: 30, total_tokens: 280 });
    expect(outcome.cost_usd).toBeCloseTo((250 * 1 + 30 * 2) / 1_000_000, 12);

    const [first, second] = server.chatRequests.map((request) => request.body);
    expect(first?.messages).toEqual([
      { role: "system", content: "You write notes." },
      { role: "user", content: "Say hello" },
    ]);
    expect(first?.tools?.map((tool) => tool.function.name)).toEqual(["echo", "bulky", "guarded", "broken"]);
    expect(first?.tools?.[0]?.function.parameters).toMatchObject({
      properties: { text: { type: "string" } },
    });
    const callId = harness.tools.calls[0]?.callId;
    expect(second?.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: "I will echo first.",
        tool_calls: [
          { id: callId, type: "function", function: { name: "echo", arguments: '{"text":"hello"}' } },
        ],
      },
      { role: "tool", tool_call_id: callId, content: "echo: hello" },
    ]);

    // Status events are the run manager's: the worker publishes what happened inside the run.
    expect(harness.events.map((event) => event.type)).toEqual(["thought", "action", "observation", "result"]);
    expect(harness.events.map((event) => event.id)).toEqual([1, 2, 3, 4]);
    expect(harness.ofType("thought")[0]?.data.text).toBe("I will echo first.");
    expect(harness.ofType("result")[0]?.data).toMatchObject({
      text: "The tool said: echo: hello",
      worker: "llm",
    });
    expect(harness.events.every((event) => event.agent === "notes" && event.run === "r_test")).toBe(true);
  });

  it("appends a note to the task, and sends the agent's temperature", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({ frontmatter: { temperature: 0.3 } }),
      task: "Fix the bug",
    });
    server.enqueue(textReply("done"));
    await harness.run({ note: "The CLI tool already wrote: patch.diff" });
    const body = server.chatRequests[0]?.body;
    expect(body?.messages[1]).toEqual({
      role: "user",
      content: "Fix the bug\n\nThe CLI tool already wrote: patch.diff",
    });
    expect(body?.temperature).toBe(0.3);
  });

  it("stops with user_stop, aborting the model call in flight", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.enqueue(textReply("slow ".repeat(200), { chunkSize: 5, delayBetweenChunksMs: 50 }));
    const running = harness.run();
    await server.waitForChatRequests(1);
    harness.control.stop("user_stop", "stopped by the user");
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "stopped", reason: "user_stop" });
    await expect.poll(() => server.chatRequests[0]?.closedByClient).toBe(true);
  });

  it("stops at once while its tools are still being listed (an MCP server that never starts)", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    let listing!: () => void;
    const listed = new Promise<void>((resolve) => (listing = resolve));
    harness.tools.specs = () => {
      listing();
      return new Promise(() => undefined);
    };
    const running = harness.run();
    await listed;
    harness.control.stop("user_stop", "stopped by the user");
    expect(await running).toMatchObject({ status: "stopped", reason: "user_stop" });
    expect(server.chatRequests).toHaveLength(0);
  });

  it("waits while paused before a tool call, and goes on when resumed", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.enqueue(
      toolCallReply(
        { name: "echo", arguments: { text: "later" } },
        { text: "calling", delayBeforeFirstChunkMs: 200 },
      ),
      textReply("finished"),
    );
    const running = harness.run();
    await server.waitForChatRequests(1);
    harness.control.pause();
    await harness.waitForEvent((event) => event.type === "thought");
    await new Promise((resolve) => setImmediate(resolve));
    expect(harness.tools.calls).toHaveLength(0);
    expect(server.chatRequests).toHaveLength(1);
    harness.control.resume();
    expect(await running).toMatchObject({ status: "completed", result: "finished" });
    expect(harness.tools.calls).toHaveLength(1);
  });

  it("ends failed with timeout when the run passes its timeout", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition(), timeoutMilliseconds: 400 });
    server.enqueue({ type: "hang" });
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "failed", reason: "timeout" });
  });

  it("ends failed with llm_error after the retries, telling about each retry", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition(), client: { maxAttempts: 2 } });
    server.enqueue(httpErrorReply(503), httpErrorReply(503));
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "failed", reason: "llm_error", error: { code: "LLM_HTTP" } });
    const errors = harness.ofType("error").map((event) => event.data);
    expect(errors[0]).toMatchObject({ code: "LLM_HTTP", retryable: true });
    expect(errors.at(-1)?.message).toContain("HTTP 503");
  });

  it("tells in a fallback event when the agent's fallback model takes over", async () => {
    const definition = makeDefinition({ frontmatter: { model: "main", fallback_models: ["spare"] } });
    const harness = new LoopHarness(server, { definition, client: { maxAttempts: 1 } });
    server.enqueue(httpErrorReply(500), textReply("from spare"));
    expect(await harness.run()).toMatchObject({ status: "completed", result: "from spare" });
    expect(harness.ofType("fallback")[0]?.data).toMatchObject({
      from: "main",
      to: "spare",
      reason: "LLM_HTTP",
    });
  });
});
