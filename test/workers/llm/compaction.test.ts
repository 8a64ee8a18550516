import { describe, expect, it } from "vitest";
import type { ModelProvider } from "../../../src/llm/model-client.js";
import { SUMMARY_INSTRUCTIONS } from "../../../src/workers/llm/guard-messages.js";
import {
  httpErrorReply,
  textReply,
  toolCallReply,
  type RecordedRequest,
} from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { LoopHarness } from "./loop-harness.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

const isSummaryRequest = (request: RecordedRequest) =>
  request.body?.messages[0]?.content === SUMMARY_INSTRUCTIONS;

/** A model that calls `bulky` for six rounds, then answers; summary requests get `summaryReply`. */
function scriptedModel(summaryReply: () => ReturnType<typeof textReply> | ReturnType<typeof httpErrorReply>) {
  let rounds = 0;
  server.setDefaultReply((request) => {
    if (isSummaryRequest(request)) return summaryReply();
    rounds += 1;
    return rounds <= 6
      ? toolCallReply({ name: "bulky", arguments: { size: 400 + rounds } })
      : textReply("all done");
  });
}

function mainRequests(): RecordedRequest[] {
  return server.chatRequests.filter((request) => !isSummaryRequest(request));
}

function harness(wrapModel?: (client: ModelProvider) => ModelProvider) {
  const definition = makeDefinition({ systemPrompt: "You are the compaction test agent." });
  return new LoopHarness(server, {
    definition,
    task: "Gather a lot of output",
    llm: { context: { max_tokens: 300, keep_recent: 2 } },
    ...(wrapModel ? { wrapModel } : {}),
  });
}

describe("LLM loop compaction", () => {
  it("replaces the middle of a long history by an LLM summary, keeping the prompt, the task and tool pairs", async () => {
    scriptedModel(() => textReply("SUMMARY: bulky was called and returned long text"));
    const run = harness();
    const outcome = await run.run();
    expect(outcome).toMatchObject({ status: "completed", result: "all done" });

    const compactions = run.ofType("compaction");
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]?.data).toMatchObject({ method: "summary" });
    expect(compactions[0]?.data.tokens_after).toBeLessThan(compactions[0]?.data.tokens_before ?? 0);
    expect(compactions[0]?.data.messages_after).toBeLessThan(compactions[0]?.data.messages_before ?? 0);

    const summaryRequest = server.chatRequests.find(isSummaryRequest);
    expect(String(summaryRequest?.body?.messages[1]?.content)).toContain("[called bulky(");
    expect(summaryRequest?.body?.tools).toBeUndefined();

    for (const request of mainRequests()) {
      const messages = request.body?.messages ?? [];
      expect(messages[0]).toEqual({ role: "system", content: "You are the compaction test agent." });
      expect(messages[1]).toEqual({ role: "user", content: "Gather a lot of output" });
      expect(messages[2]?.role).not.toBe("tool");
      messages.forEach((message, index) => {
        if (message.role !== "tool") return;
        const previous = messages[index - 1];
        expect(
          previous?.role === "tool" || (previous?.role === "assistant" && previous.tool_calls),
        ).toBeTruthy();
      });
    }
    const afterCompaction = mainRequests().at(-1)?.body?.messages ?? [];
    expect(String(afterCompaction[2]?.content)).toContain("SUMMARY: bulky was called");
  });

  it("sends every call the conversation as it is at that call, through compactions", async () => {
    scriptedModel(() => textReply("SUMMARY: bulky was called and returned long text"));
    // The JSON of each call's messages when the loop makes the call: a message changed after it
    // was sent once would go out stale in a later call's body, whose message texts are kept.
    const atCall: string[] = [];
    const run = harness((client) => ({
      complete: (request, options) => {
        atCall.push(JSON.stringify(request.messages));
        return client.complete(request, options);
      },
    }));
    expect(await run.run()).toMatchObject({ status: "completed", result: "all done" });

    expect(run.ofType("compaction").length).toBeGreaterThan(0);
    expect(server.chatRequests.length).toBeGreaterThan(7);
    expect(server.chatRequests.map((request) => JSON.stringify(request.body?.messages))).toEqual(atCall);
  });

  it("falls back to plain truncation when the summary call fails", async () => {
    scriptedModel(() => httpErrorReply(400));
    const run = harness();
    expect(await run.run()).toMatchObject({ status: "completed", result: "all done" });
    expect(run.ofType("compaction")[0]?.data).toMatchObject({ method: "truncation" });
    const afterCompaction = mainRequests().at(-1)?.body?.messages ?? [];
    expect(String(afterCompaction[2]?.content)).toMatch(/earlier messages of this run were removed/);
    expect(
      run.ofType("warning").some((event) => event.data.message.includes("summary for compaction failed")),
    ).toBe(true);
  });
});
