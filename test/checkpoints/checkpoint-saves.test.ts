import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.js";
import { maskingCheckpoints } from "../../src/checkpoints/masking-checkpoints.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const SECRET = "sk-checkpoint-0123456789abcdef";
const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function checkpointsIn(redactor: SecretRedactor) {
  const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-checkpoint-saves-"));
  directories.push(dataDirectory);
  const store = new CheckpointStore({
    dataDirectory,
    logger: createLogger({ level: "silent", pretty: false }),
  });
  const records = maskingCheckpoints(
    store,
    (value) => redactor.redactValue(value),
    () => redactor.size,
  );
  return { store, records };
}

const state = (messages: ChatMessage[]) => ({
  round: messages.length,
  messages,
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  cost_usd: 0,
  removed_tools: [],
  recent_calls: [],
});

describe("checkpoint saves of a growing conversation", () => {
  it("keeps every message as saved, masked, with the messages reused from one save to the next", async () => {
    const redactor = new SecretRedactor();
    redactor.add("api_key", SECRET);
    const { store, records } = checkpointsIn(redactor);
    const run = records.forRun("r_1");
    const messages: ChatMessage[] = [
      { role: "system", content: "prompt" },
      { role: "user", content: `use ${SECRET}` },
    ];
    await run.save(state(messages));
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: `{"k":"${SECRET}"}` } }],
    });
    messages.push({ role: "tool", tool_call_id: "c1", content: 'quote "\\ \u2028 done' });
    await run.save(state(messages));
    const loaded = store.load("r_1");
    expect(loaded?.round).toBe(4);
    expect(loaded?.messages).toEqual([
      { role: "system", content: "prompt" },
      { role: "user", content: "use [secret:api_key]" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "t", arguments: '{"k":"[secret:api_key]"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: 'quote "\\ \u2028 done' },
    ]);
  });

  it("masks the messages saved before a secret was learned once it is known", async () => {
    const redactor = new SecretRedactor();
    const { store, records } = checkpointsIn(redactor);
    const run = records.forRun("r_2");
    const messages: ChatMessage[] = [{ role: "user", content: `the key is ${SECRET}` }];
    await run.save(state(messages));
    expect(store.load("r_2")?.messages[0]?.content).toContain(SECRET);
    redactor.add("learned", SECRET);
    messages.push({ role: "assistant", content: "ok" });
    await run.save(state(messages));
    expect(store.load("r_2")?.messages.map((message) => message.content)).toEqual([
      "the key is [secret:learned]",
      "ok",
    ]);
  });
});
