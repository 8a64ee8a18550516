import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../../src/checkpoints/checkpoint.js";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.js";
import type { CheckpointRecords } from "../../src/checkpoints/checkpoint-records.js";
import { maskingCheckpoints } from "../../src/checkpoints/masking-checkpoints.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const TOKEN = "ghp_checkpoint0123456789abcdefghijklmn";
const LATER = "dk-learned-midrun-7f3a91c2e4b8d6f0";

/** Checkpoint records that keep what they are given, and a redactor that counts what it masks. */
function setUp() {
  const saved: Omit<Checkpoint, "run" | "saved_at">[] = [];
  const records: CheckpointRecords = {
    forRun: () => ({
      save: async (checkpoint) => {
        saved.push(checkpoint);
      },
    }),
    load: () => undefined,
    remove: () => undefined,
  };
  const redactor = new SecretRedactor();
  redactor.add("github", TOKEN);
  const masked: unknown[] = [];
  const counting = {
    redactValue: <Value>(value: Value): Value => {
      masked.push(value);
      return redactor.redactValue(value);
    },
    get size() {
      return redactor.size;
    },
  };
  const checkpoints = maskingCheckpoints(records, counting).forRun("r_1");
  return { saved, redactor, masked, checkpoints };
}

function state(messages: ChatMessage[]) {
  return {
    round: messages.length,
    messages: [...messages],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    cost_usd: 0,
    removed_tools: [],
    recent_calls: [`noop:${TOKEN}`],
  };
}

describe("masking checkpoints", () => {
  it("masks every message and the rest of the state, each message once per run", async () => {
    const { saved, masked, checkpoints } = setUp();
    const system: ChatMessage = { role: "system", content: `Memory: ${"a note. ".repeat(1_000)}` };
    const messages: ChatMessage[] = [system, { role: "user", content: `use ${TOKEN}` }];
    await checkpoints.save(state(messages));
    messages.push({ role: "assistant", content: `I will send ${TOKEN}` });
    await checkpoints.save(state(messages));
    await checkpoints.save(state(messages));

    const last = saved.at(-1);
    expect(JSON.stringify(saved)).not.toContain(TOKEN);
    expect(last?.messages[1]).toEqual({ role: "user", content: "use [secret:github]" });
    expect(last?.recent_calls).toEqual(["noop:[secret:github]"]);
    // The system prompt went through the redactor once, not at each of the three saves.
    expect(masked.filter((value) => value === system)).toHaveLength(1);
  });

  it("saves the lists as they are at each save, masked, even when the caller changes them in place", async () => {
    const { saved, checkpoints } = setUp();
    const messages: ChatMessage[] = [{ role: "system", content: "rules" }];
    const recentCalls = ["noop:{}"];
    const removedTools: string[] = [];
    // What each save handed on, as it was then (the store writes it before save returns).
    const handed: { recent: string[]; removed: number }[] = [];
    const save = async () => {
      await checkpoints.save({ ...state(messages), recent_calls: recentCalls, removed_tools: removedTools });
      const last = saved.at(-1);
      handed.push({ recent: [...(last?.recent_calls ?? [])], removed: last?.removed_tools.length ?? -1 });
    };
    await save();
    await save();
    recentCalls[0] = `noop:${TOKEN}`;
    await save();
    await save();
    recentCalls[0] = "noop:{}";
    removedTools.push("flaky");
    await save();
    await save();
    recentCalls.push(`noop:${TOKEN}`);
    await save();
    expect(handed.map((save) => save.recent)).toEqual([
      ["noop:{}"],
      ["noop:{}"],
      ["noop:[secret:github]"],
      ["noop:[secret:github]"],
      ["noop:{}"],
      ["noop:{}"],
      ["noop:{}", "noop:[secret:github]"],
    ]);
    expect(handed.map((save) => save.removed)).toEqual([0, 0, 0, 0, 1, 1, 1]);
  });

  it("masks a value learned mid-run in the messages saved before it", async () => {
    const { saved, redactor, checkpoints } = setUp();
    const messages: ChatMessage[] = [
      { role: "system", content: "rules" },
      { role: "tool", tool_call_id: "call_1", content: `the key is ${LATER}` },
    ];
    const calls = [`read:${LATER}`, `noop:${TOKEN}`];
    await checkpoints.save({ ...state(messages), recent_calls: calls });
    expect(saved[0]?.messages[1]?.content).toContain(LATER);
    expect(saved[0]?.recent_calls).toEqual([`read:${LATER}`, "noop:[secret:github]"]);

    redactor.add("deploy_key", LATER);
    await checkpoints.save({ ...state(messages), recent_calls: calls });
    expect(saved[1]?.messages[1]).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "the key is [secret:deploy_key]",
    });
    expect(saved[1]?.recent_calls).toEqual(["read:[secret:deploy_key]", "noop:[secret:github]"]);
  });

  it("keeps the whole masked conversation in the file, as it grows from save to save", async () => {
    const dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-checkpoints-"));
    try {
      const store = new CheckpointStore({
        dataDirectory,
        logger: createLogger({ level: "silent", pretty: false }),
      });
      const redactor = new SecretRedactor();
      redactor.add("github", TOKEN);
      const checkpoints = maskingCheckpoints(store, redactor).forRun("r_2");
      const messages: ChatMessage[] = [
        { role: "system", content: "rules" },
        { role: "user", content: `use ${TOKEN}` },
      ];
      await checkpoints.save(state(messages));
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "noop", arguments: "{}" } }],
      });
      await checkpoints.save(state(messages));
      expect(store.load("r_2")).toMatchObject({
        run: "r_2",
        round: 3,
        messages: [messages[0], { role: "user", content: "use [secret:github]" }, messages[2]],
        recent_calls: ["noop:[secret:github]"],
      });
      await store.settled();
    } finally {
      rmSync(dataDirectory, { recursive: true, force: true });
    }
  });
});
