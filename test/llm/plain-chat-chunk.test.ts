import { describe, expect, it } from "vitest";
import { ChatChunkSchema } from "../../src/llm/chat-chunk-schema.js";
import { plainChatChunk } from "../../src/llm/plain-chat-chunk.js";

/** Chunks as servers send them, and shapes the schema refuses or fills in. */
const SAMPLES: unknown[] = [
  {
    id: "x",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { role: "assistant", content: "hi" }, finish_reason: null }],
  },
  { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  { choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } },
  { choices: [], usage: { prompt_tokens: 10, completion_tokens: 2 } },
  { choices: [], usage: null },
  { choices: [{ delta: null }] },
  { choices: [{ delta: { content: null, tool_calls: null } }] },
  {
    choices: [
      {
        delta: {
          tool_calls: [
            { index: 0, id: "call_1", type: "function", function: { name: "noop", arguments: "" } },
          ],
        },
      },
    ],
  },
  { choices: [{ delta: { tool_calls: [{ index: 1, id: null, function: null }] } }] },
  {
    choices: [
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, extra: { kept: true } },
    ],
  },
  // Filled in or refused by the schema: left to it.
  {},
  { usage: { prompt_tokens: 1, completion_tokens: 1 } },
  null,
  "data",
  [],
  { choices: {} },
  { choices: [null] },
  { choices: [[]] },
  { choices: [{ delta: [] }] },
  { choices: [{ delta: { content: 5 } }] },
  { choices: [{ finish_reason: 1 }] },
  { choices: [{ delta: { tool_calls: {} } }] },
  { choices: [{ delta: { tool_calls: [{ index: -1 }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0.5 }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: "0" }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 2 ** 60 }] } }] },
  { choices: [{ delta: { tool_calls: [{ id: "call" }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, id: 7 }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, function: "noop" }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 1 } }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: {} } }] } }] },
  { choices: [], usage: { prompt_tokens: -1, completion_tokens: 0 } },
  { choices: [], usage: { prompt_tokens: Number.NaN, completion_tokens: 0 } },
  { choices: [], usage: { prompt_tokens: Number.POSITIVE_INFINITY, completion_tokens: 0 } },
  { choices: [], usage: { prompt_tokens: 1 } },
  { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: null } },
  { choices: [], usage: "many" },
];

describe("a plain chat chunk", () => {
  it("passes only chunks the schema accepts, as the schema gives them back", () => {
    let passed = 0;
    for (const sample of SAMPLES) {
      const plain = plainChatChunk(sample);
      const parsed = ChatChunkSchema.safeParse(sample);
      if (plain === undefined) continue;
      passed += 1;
      expect(parsed.success, JSON.stringify(sample)).toBe(true);
      expect(plain).toEqual(parsed.data);
      // The chunk itself: nothing copied.
      expect(plain).toBe(sample);
    }
    expect(passed).toBe(10);
  });

  it("leaves to the schema every chunk it refuses or fills in", () => {
    for (const sample of SAMPLES.slice(10))
      expect(plainChatChunk(sample), JSON.stringify(sample)).toBeUndefined();
  });
});
