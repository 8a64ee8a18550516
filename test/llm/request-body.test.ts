import { describe, expect, it } from "vitest";
import type { ChatMessage, ChatTool } from "../../src/llm/chat-message.js";
import { RequestBodies } from "../../src/llm/request-body.js";
import type { ChatRequest } from "../../src/llm/stream-completion.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { withScriptedLlmServer } from "../support/with-scripted-llm-server.js";
import { testClient } from "./client-settings.js";

const server = withScriptedLlmServer();

const tools: ChatTool[] = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Reads a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

/** What the `openai` SDK sends for a request when it turns the parameters into JSON itself. */
function sdkBody(request: ChatRequest): string {
  return JSON.stringify({
    model: request.model,
    messages: request.messages,
    ...(request.tools && request.tools.length > 0 ? { tools: [...request.tools] } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    stream: true,
    stream_options: { include_usage: true },
  });
}

describe("request bodies", () => {
  it("sends every call of a growing conversation as the SDK's own JSON would be", async () => {
    const client = testClient(server.url);
    const signal = new AbortController().signal;
    const messages: ChatMessage[] = [
      { role: "system", content: 'Quote "exactly"; keep \\ and \u2028 and ✓ as they are.' },
      { role: "user", content: "Read notes.md\n\tthen answer." },
    ];
    const sent: string[] = [];
    for (let round = 1; round <= 3; round += 1) {
      server.enqueue(toolCallReply({ name: "read_file", arguments: { path: `notes-${round}.md` } }));
      const request = { model: "m1", messages, tools, temperature: 0.25 };
      const response = await client.complete(request, { signal });
      sent.push(sdkBody(request));
      messages.push({ role: "assistant", content: response.text || null, tool_calls: response.toolCalls });
      for (const call of response.toolCalls)
        messages.push({ role: "tool", tool_call_id: call.id, content: `line ${round}\n` });
    }
    // A history made anew (as a compaction makes it): the same first messages, new ones after.
    const compacted: ChatMessage[] = [
      ...messages.slice(0, 2),
      { role: "user", content: "Summary of the earlier rounds" },
      ...messages.slice(-2),
    ];
    server.enqueue(textReply("done"));
    const last = { model: "m1", messages: compacted, tools };
    await client.complete(last, { signal });
    sent.push(sdkBody(last));

    expect(server.chatRequests.map((request) => request.bodyText)).toEqual(sent);
    expect(server.chatRequests[0]?.headers["content-type"]).toBe("application/json");
    expect(server.chatRequests[2]?.body?.messages).toHaveLength(6);
  });

  it("sends a history cut short and grown again with its new messages", () => {
    const bodies = new RequestBodies();
    const messages: ChatMessage[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "first" },
      { role: "assistant", content: "one" },
    ];
    expect(bodies.of({ messages })).toBe(JSON.stringify({ messages }));
    messages.length = 1;
    messages.push({ role: "user", content: "second" }, { role: "assistant", content: "two" });
    expect(bodies.of({ messages })).toBe(JSON.stringify({ messages }));
    messages.push({ role: "user", content: "third" });
    expect(bodies.of({ messages })).toBe(JSON.stringify({ messages }));
  });

  it("leaves out fields JSON has no text for, as JSON.stringify does", () => {
    const parameters = {
      model: "m1",
      messages: [{ role: "assistant", content: null, tool_calls: undefined }, undefined],
      tools: [],
      temperature: undefined,
      stream: true,
    };
    expect(new RequestBodies().of(parameters)).toBe(JSON.stringify(parameters));
    expect(new RequestBodies().of({})).toBe("{}");
  });
});
