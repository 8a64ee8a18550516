import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { EventBus } from "../../src/events/event-bus.js";
import type { ChatMessage, ModelResponse } from "../../src/llm/chat-message.js";
import type { ModelProvider } from "../../src/llm/model-client.js";
import { newRunRecord } from "../../src/runs/record/new-run-record.js";
import { SecretRedactor } from "../../src/secrets/secret-redactor.js";
import { openCoreTraces } from "../../src/telemetry/core-traces.js";
import { partsOf } from "../../src/telemetry/masked-content.js";
import { tracedModel } from "../../src/telemetry/traced-model.js";
import { KeptSpans } from "../support/kept-spans.js";
import { makeDefinition } from "../support/make-definition.js";

const FIRST_SECRET = "tok-Content-5b1e7d20aa";
/** A value the run sees before the vault knows it is a secret. */
const LATE_SECRET = "late-Secret-93c4e1f0bd";

/** A model that calls a tool every round, its arguments naming the round. */
const model: ModelProvider = {
  complete: async (request) => {
    const round = request.messages.filter((message) => message.role === "tool").length;
    const response: ModelResponse = {
      text: "",
      toolCalls: [
        {
          id: `call_${round}`,
          type: "function",
          function: { name: "echo", arguments: `{"round":${round}}` },
        },
      ],
      finishReason: "tool_calls",
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      usageReported: true,
      costUsd: 0,
      model: request.model,
    };
    return response;
  },
};

/** A traced run of `rounds` model calls with content on; the vault learns LATE_SECRET before round `learnAt`. */
async function tracedRun(rounds: number, learnAt?: number) {
  const redactor = new SecretRedactor();
  redactor.add("token", FIRST_SECRET);
  let redactedCharacters = 0;
  const redact = (text: string) => {
    redactedCharacters += text.length;
    return redactor.redactText(text);
  };
  const kept = new KeptSpans();
  const traces = await openCoreTraces({
    settings: ConfigSchema.parse({ telemetry: { traces: { endpoint: "http://127.0.0.1:9", content: true } } })
      .telemetry,
    redact,
    secretsKnown: () => redactor.size,
    exporter: kept,
  });
  const runs = traces.runs;
  if (runs === undefined) throw new Error("traces should be on");
  const traced = tracedModel(model, { content: true });
  const control = new AbortController();
  const runId = "r_content";
  runs.stampNewRun(
    newRunRecord({
      id: runId,
      agent: "lead",
      task: "echo",
      trigger: { kind: "api" },
      definition: makeDefinition({ id: "lead" }),
      createdAt: new Date(0),
    }),
  );
  // Each round's conversation as the model was sent it: what its span must hold, masked.
  const sent: ChatMessage[][] = [];
  await runs.run(
    { runId, definition: { id: "lead", description: "" }, events: new EventBus(), control },
    async () => {
      const messages: ChatMessage[] = [
        { role: "system", content: "You echo." },
        { role: "user", content: `echo the token ${FIRST_SECRET}, and ${LATE_SECRET}` },
      ];
      for (let round = 0; round < rounds; round += 1) {
        if (round === learnAt) redactor.add("late", LATE_SECRET);
        sent.push([...messages]);
        const response = await traced.complete({ model: "m", messages }, { signal: control.signal });
        messages.push({ role: "assistant", content: null, tool_calls: response.toolCalls });
        messages.push({
          role: "tool",
          tool_call_id: response.toolCalls[0]?.id ?? "",
          content: `round ${round}: ${"output ".repeat(20)}`,
        });
      }
    },
  );
  runs.onEvent({ id: 1, time: "", agent: "lead", run: runId, type: "status", data: { status: "completed" } });
  await traces.shutdown();
  const chats = kept.spans.filter((span) => span.name === "chat m");
  expect(chats).toHaveLength(rounds);
  // Complete and masked: each span holds the whole conversation it was sent, masked as a whole.
  chats.forEach((span, round) => {
    const whole = JSON.stringify((sent[round] ?? []).map(partsOf));
    expect(span.attributes["gen_ai.input.messages"]).toBe(redactor.redactText(whole));
  });
  const exported = JSON.stringify(kept.spans.map((span) => span.attributes));
  expect(exported).not.toContain(FIRST_SECRET);
  expect(exported).toContain("[secret:token]");
  const finalSize = JSON.stringify((sent.at(-1) ?? []).map(partsOf)).length;
  return { exported, redactedCharacters, finalSize };
}

describe("a chat span's conversation with content on", () => {
  it("is complete and masked in every span, each message masked once", async () => {
    const { redactedCharacters, finalSize, exported } = await tracedRun(40);
    expect(exported).toContain(LATE_SECRET);
    // Linear: about the final conversation's size is masked (and the answers), where masking each
    // span's conversation whole would mask 20 times as much.
    expect(redactedCharacters).toBeLessThan(2 * finalSize);
  });

  it("is masked again, in spans recorded before, when the vault learns a secret the run holds", async () => {
    const { exported } = await tracedRun(10, 5);
    expect(exported).not.toContain(LATE_SECRET);
    expect(exported).toContain("[secret:late]");
  });
});
