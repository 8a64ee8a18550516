import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Checkpoint } from "../../src/checkpoints/checkpoint.js";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.js";
import { maskingCheckpoints } from "../../src/checkpoints/masking-checkpoints.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { RequestBodies } from "../../src/llm/request-body.js";
import { createLogger } from "../../src/logging/logger.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";

const LATER = "dk-learned-midrun-0c9e2a7b41f3d586";
const logger = createLogger({ level: "silent", pretty: false });

let dataDirectory: string;
beforeEach(() => {
  dataDirectory = mkdtempSync(path.join(os.tmpdir(), "agentd-checkpoint-journal-"));
});
afterEach(() => rmSync(dataDirectory, { recursive: true, force: true }));

function fileOf(run: string): string {
  return path.join(dataDirectory, "checkpoints", `${run}.json`);
}

function linesOf(run: string): string[] {
  return readFileSync(fileOf(run), "utf8").split("\n").filter(Boolean);
}

function state(messages: readonly ChatMessage[], round: number): Omit<Checkpoint, "run" | "saved_at"> {
  return {
    round,
    messages: [...messages],
    usage: { prompt_tokens: round * 10, completion_tokens: round, total_tokens: round * 11 },
    cost_usd: round / 100,
    removed_tools: [],
    recent_calls: [`noop:{"round":${round}}`],
  };
}

function toolRound(round: number): ChatMessage[] {
  const id = `call_${round}`;
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "noop", arguments: `{"round":${round}}` } }],
    },
    { role: "tool", tool_call_id: id, content: `done ${round}` },
  ];
}

describe("the checkpoint journal", () => {
  it("appends the rounds of a growing conversation, in the kernel once save returns, and reads them back", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const checkpoints = store.forRun("r_grow");
    const messages: ChatMessage[] = [
      { role: "system", content: "rules" },
      { role: "user", content: "call noop" },
    ];
    await checkpoints.save(state(messages, 0));
    for (let round = 1; round <= 3; round += 1) {
      const [call, result] = toolRound(round) as [ChatMessage, ChatMessage];
      messages.push(call);
      // Not awaited: the append is on disk as soon as save returns (what runs the tool next relies on).
      void checkpoints.save(state(messages, round));
      expect(readFileSync(fileOf("r_grow"), "utf8")).toContain(`"tool_calls":[{"id":"call_${round}"`);
      messages.push(result);
      void checkpoints.save(state(messages, round));
      // The end of the round saves the same state again: nothing is written.
      void checkpoints.save(state(messages, round));
    }
    // One whole line, then the model's answer and the tool's result of each round.
    expect(linesOf("r_grow")).toHaveLength(1 + 3 * 2);

    // A new store, as after a restart, reads the same state.
    const reread = new CheckpointStore({ dataDirectory, logger }).load("r_grow");
    expect(reread).toMatchObject({ ...state(messages, 3), run: "r_grow" });
    expect(store.load("r_grow")).toEqual(reread);
    await store.settled();
    store.close();
  });

  it("writes the loop detector's calls and the removed tools as they are at each save, even when changed in place", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const checkpoints = store.forRun("r_lists");
    const messages: ChatMessage[] = [{ role: "system", content: "rules" }];
    const recentCalls = ["noop:{}"];
    const removedTools: string[] = [];
    const save = (round: number) =>
      checkpoints.save({ ...state(messages, round), recent_calls: recentCalls, removed_tools: removedTools });
    await save(0);
    for (let round = 1; round <= 3; round += 1) {
      const [call, result] = toolRound(round) as [ChatMessage, ChatMessage];
      messages.push(call);
      await save(round);
      // The same arrays, changed after they were saved.
      recentCalls.push(`noop:{"round":${round}}`);
      if (round === 2) removedTools.push("flaky");
      messages.push(result);
      await save(round);
    }
    expect(linesOf("r_lists").length).toBeGreaterThan(1);
    const reread = new CheckpointStore({ dataDirectory, logger }).load("r_lists");
    expect(reread?.recent_calls).toEqual([
      "noop:{}",
      'noop:{"round":1}',
      'noop:{"round":2}',
      'noop:{"round":3}',
    ]);
    expect(reread?.removed_tools).toEqual(["flaky"]);
    expect(reread?.messages).toEqual(messages);
    await store.settled();
    store.close();
  });

  it("writes each message as JSON.stringify does, and the model is sent that same text", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const checkpoints = store.forRun("r_texts");
    const messages: ChatMessage[] = [{ role: "system", content: "rules" }];
    await checkpoints.save(state(messages, 0));
    const call = {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a\\tb"}' } },
      ],
      // A field JSON has no text for, left out as JSON.stringify leaves it.
      refusal: undefined,
    } as ChatMessage;
    const result: ChatMessage = {
      role: "tool",
      tool_call_id: "c1",
      content: '     1\t"quoted" \u2028 \ud83d\ude00\n',
    };
    messages.push(call, result);
    await checkpoints.save(state(messages, 1));
    expect(linesOf("r_texts").at(-1)).toContain(`"messages":${JSON.stringify([call, result])}}`);
    expect(new RequestBodies().of({ messages })).toBe(JSON.stringify({ messages }));
    await store.settled();
    store.close();
  });

  it("writes the spending as it is at each save, a usage object changed in place included", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const checkpoints = store.forRun("r_spending");
    const messages: ChatMessage[] = [{ role: "system", content: "rules" }];
    const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
    const save = (cost: number) =>
      checkpoints.save({ ...state(messages, 1), usage, cost_usd: cost, messages: [...messages] });
    await save(0.01);
    const [call, result] = toolRound(1) as [ChatMessage, ChatMessage];
    messages.push(call);
    await save(0.01);
    // Spending of the same round (a cut-off attempt billed, say), in the object saved before.
    usage.completion_tokens = 5;
    usage.total_tokens = 15;
    messages.push(result);
    await save(0.01);
    expect(new CheckpointStore({ dataDirectory, logger }).load("r_spending")).toMatchObject({
      round: 1,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      cost_usd: 0.01,
      messages,
    });
    await save(0.02);
    expect(new CheckpointStore({ dataDirectory, logger }).load("r_spending")?.cost_usd).toBe(0.02);
    expect(linesOf("r_spending")).toHaveLength(4);
    await store.settled();
    store.close();
  });

  it("writes the file whole again when the conversation is compacted, and after a power cut tore its last line", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const checkpoints = store.forRun("r_compact");
    const system: ChatMessage = { role: "system", content: "rules" };
    const messages: ChatMessage[] = [system, { role: "user", content: "call noop" }, ...toolRound(1)];
    await checkpoints.save(state(messages, 1));
    messages.push(...toolRound(2));
    await checkpoints.save(state(messages, 2));
    expect(linesOf("r_compact")).toHaveLength(2);

    const compacted: ChatMessage[] = [system, { role: "user", content: "Summary: noop ran twice." }];
    await checkpoints.save(state(compacted, 2));
    expect(linesOf("r_compact")).toHaveLength(1);
    compacted.push(...toolRound(3));
    await checkpoints.save(state(compacted, 3));
    expect(store.load("r_compact")?.messages).toEqual(compacted);

    // Half a line at the end (a power cut mid-append): the state before it.
    appendFileSync(fileOf("r_compact"), `{"keep":4,"round":4,"usage":{"prompt_t`);
    expect(new CheckpointStore({ dataDirectory, logger }).load("r_compact")).toMatchObject(
      state(compacted, 3),
    );
    await store.settled();
    store.close();
  });

  it("reads a checkpoint written whole by an earlier version, and resumes appending after rewriting it", async () => {
    mkdirSync(path.join(dataDirectory, "checkpoints"));
    const messages: ChatMessage[] = [
      { role: "system", content: "rules" },
      { role: "user", content: "call noop" },
    ];
    const old = { run: "r_old", ...state(messages, 0), saved_at: "2026-01-01T00:00:00.000Z" };
    writeFileSync(fileOf("r_old"), JSON.stringify(old));
    const store = new CheckpointStore({ dataDirectory, logger });
    const resumeFrom = store.load("r_old");
    expect(resumeFrom).toEqual(old);

    const checkpoints = store.forRun("r_old", resumeFrom);
    const resumed = [...(resumeFrom?.messages ?? []), ...toolRound(1)];
    await checkpoints.save(state(resumed, 1));
    resumed.push(...toolRound(2));
    await checkpoints.save(state(resumed, 2));
    expect(linesOf("r_old")).toHaveLength(2);
    expect(store.load("r_old")?.messages).toEqual(resumed);
    store.remove("r_old");
    await store.settled();
    expect(store.load("r_old")).toBeUndefined();
    store.close();
  });

  it("leaves no line with a value the redactor learned mid-run", async () => {
    const store = new CheckpointStore({ dataDirectory, logger });
    const redactor = new SecretRedactor();
    const checkpoints = maskingCheckpoints(store, redactor).forRun("r_secret");
    const messages: ChatMessage[] = [
      { role: "system", content: "rules" },
      { role: "tool", tool_call_id: "call_1", content: `the key is ${LATER}` },
    ];
    await checkpoints.save(state(messages, 1));
    messages.push(...toolRound(2));
    await checkpoints.save(state(messages, 2));
    expect(readFileSync(fileOf("r_secret"), "utf8")).toContain(LATER);

    redactor.add("deploy_key", LATER);
    messages.push(...toolRound(3));
    await checkpoints.save(state(messages, 3));
    const text = readFileSync(fileOf("r_secret"), "utf8");
    expect(text).not.toContain(LATER);
    expect(text).toContain("the key is [secret:deploy_key]");
    expect(store.load("r_secret")?.messages).toHaveLength(messages.length);
    await store.settled();
    store.close();
  });
});
