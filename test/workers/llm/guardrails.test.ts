import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/llm/chat-message.js";
import { textReply, toolCallReply, type RecordedRequest } from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { LoopHarness } from "./loop-harness.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

function userTexts(request: RecordedRequest | undefined): string[] {
  return (request?.body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((m) => String(m.content));
}

/** Every assistant tool call of the request is answered by exactly one tool message, and no tool message is orphaned. */
function isWellFormed(request: RecordedRequest): boolean {
  const pending = new Set<string>();
  for (const message of request.body?.messages ?? []) {
    if (message.role === "tool") {
      if (!message.tool_call_id || !pending.delete(message.tool_call_id)) return false;
      continue;
    }
    if (pending.size > 0) return false;
    for (const call of (message.tool_calls ?? []) as Array<{ id: string }>) pending.add(call.id);
  }
  return pending.size === 0;
}

describe("LLM loop guardrails", () => {
  it("repairs a broken history before calling the model", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    const history: ChatMessage[] = [
      { role: "system", content: "system prompt" },
      { role: "user", content: "the task" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "echo", arguments: '{"text":"a"}' } },
          { id: "call_b", type: "function", function: { name: "echo", arguments: '{"text":"b"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "echo: a" },
      { role: "tool", tool_call_id: "call_zombie", content: "from nowhere" },
      { role: "user", content: "go on" },
    ];
    server.enqueue(textReply("repaired and done"));

    expect(await harness.run({ history })).toMatchObject({
      status: "completed",
      result: "repaired and done",
    });

    const sent = server.chatRequests[0];
    expect(sent && isWellFormed(sent)).toBe(true);
    const toolMessages = sent?.body?.messages.filter((message) => message.role === "tool");
    expect(toolMessages?.map((message) => message.tool_call_id)).toEqual(["call_a", "call_b"]);
    expect(String(toolMessages?.[1]?.content)).toContain("interrupted");
    expect(harness.ofType("warning")[0]?.data.code).toBe("HISTORY_REPAIRED");
  });

  it("asks the model to continue after finish_reason length, at most twice", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.enqueue(
      textReply("Part one, ", { finishReason: "length" }),
      textReply("part two, ", { finishReason: "length" }),
      textReply("part three", { finishReason: "length" }),
      textReply("never asked for"),
    );
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "completed", result: "Part one, part two, part three" });
    expect(server.chatRequests).toHaveLength(3);
    expect(userTexts(server.chatRequests[2]).filter((text) => text.includes("cut off"))).toHaveLength(2);
    expect(harness.ofType("warning").map((event) => event.data.code)).toContain("LENGTH_LIMIT");
  });

  it("joins a continued answer once the model finishes", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.enqueue(textReply("The answer is ", { finishReason: "length" }), textReply("42."));
    expect(await harness.run()).toMatchObject({ status: "completed", result: "The answer is 42." });
  });

  it("warns the model after 3 identical calls and ends the run loop_detected at 5", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.setDefaultReply(toolCallReply({ name: "echo", arguments: { text: "again" } }));
    const outcome = await harness.run();

    expect(outcome).toMatchObject({
      status: "failed",
      reason: "loop_detected",
      error: { code: "LOOP_DETECTED" },
    });
    expect(server.chatRequests).toHaveLength(5);
    expect(harness.tools.calls).toHaveLength(4);
    expect(userTexts(server.chatRequests[2]).some((text) => text.startsWith("Warning:"))).toBe(false);
    expect(userTexts(server.chatRequests[3]).filter((text) => text.startsWith("Warning:"))).toHaveLength(1);
    expect(harness.ofType("warning").map((event) => event.data.code)).toEqual(["LOOP_DETECTED"]);
  });

  it("sees an A-B-A-B ping-pong the same way", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.setDefaultReply((request) => {
      const calls = request.body?.messages.filter((message) => message.role === "assistant").length ?? 0;
      return toolCallReply({ name: "echo", arguments: { text: calls % 2 === 0 ? "ping" : "pong" } });
    });
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "failed", reason: "loop_detected" });
    expect(server.chatRequests).toHaveLength(10);
    expect(harness.ofType("warning")[0]?.data.message).toContain("alternated 3 times");
  });

  it("removes a tool that failed 3 times in a row and tells the model", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    const broken = (attempt: number) => toolCallReply({ name: "broken", arguments: { attempt } });
    server.enqueue(broken(1), broken(2), broken(3), textReply("I will do without it"));
    const outcome = await harness.run();

    expect(outcome).toMatchObject({ status: "completed", result: "I will do without it" });
    const toolNames = (index: number) =>
      server.chatRequests[index]?.body?.tools?.map((tool) => tool.function.name);
    expect(toolNames(2)).toContain("broken");
    expect(toolNames(3)).toEqual(["echo", "bulky", "guarded"]);
    expect(userTexts(server.chatRequests[3]).some((text) => text.includes("broken failed 3 times"))).toBe(
      true,
    );
    const results = server.chatRequests[3]?.body?.messages.filter((message) => message.role === "tool");
    expect(results?.map((message) => message.content)).toEqual(
      Array(3).fill("Error (TOOL_FAILED): the disk is on fire"),
    );
    expect(harness.ofType("warning").map((event) => event.data.code)).toEqual(["TOOL_FAILED"]);
  });

  it("answers a call to a removed tool without running it", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    const broken = (attempt: number) => toolCallReply({ name: "broken", arguments: { attempt } });
    server.enqueue(broken(1), broken(2), broken(3), broken(4), textReply("ok"));
    await harness.run();
    expect(harness.tools.calls.filter((call) => call.tool === "broken")).toHaveLength(3);
    const lastTool = server.chatRequests[4]?.body?.messages
      .filter((message) => message.role === "tool")
      .at(-1);
    expect(String(lastTool?.content)).toContain("disabled for the rest of this run");
    const lastAction = harness.ofType("action").at(-1);
    const lastObservation = harness.ofType("observation").at(-1);
    expect(lastAction?.data).toMatchObject({ tool: "broken", arguments: { attempt: 4 } });
    expect(lastObservation?.data).toMatchObject({
      call_id: lastAction?.data.call_id,
      tool: "broken",
      ok: false,
      output: expect.stringContaining("disabled for the rest of this run"),
    });
  });

  it("does not count refusals by policy as failures: a later allowed call still runs", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    const guarded = (command: string) => toolCallReply({ name: "guarded", arguments: { command } });
    server.enqueue(
      guarded("forbidden 1"),
      guarded("forbidden 2"),
      guarded("forbidden 3"),
      guarded("forbidden 4"),
      guarded("allowed"),
      textReply("done"),
    );
    const outcome = await harness.run();

    expect(outcome).toMatchObject({ status: "completed", result: "done" });
    expect(server.chatRequests[5]?.body?.tools?.map((tool) => tool.function.name)).toContain("guarded");
    const lastTool = server.chatRequests[5]?.body?.messages
      .filter((message) => message.role === "tool")
      .at(-1);
    expect(lastTool?.content).toBe("ran allowed");
    expect(harness.ofType("warning")).toEqual([]);
  });

  it("still ends a run that keeps asking for the same refused call", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition() });
    server.setDefaultReply(toolCallReply({ name: "guarded", arguments: { command: "forbidden" } }));
    const outcome = await harness.run();

    expect(outcome).toMatchObject({ status: "failed", reason: "loop_detected" });
    expect(harness.ofType("warning").map((event) => event.data.code)).toEqual(["LOOP_DETECTED"]);
  });
});
