import { describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { MAX_ANSWER_CHARACTERS } from "../../src/llm/answer-size-limit.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { withScriptedLlmServer } from "../support/with-scripted-llm-server.js";
import { testClient } from "./client-settings.js";

const server = withScriptedLlmServer();
const request = { model: "m1", messages: [{ role: "user" as const, content: "hello" }] };
/** Just over the limit, in chunks of 256 KiB: a quick stream that still crosses it. */
const OVER = MAX_ANSWER_CHARACTERS + 512 * 1024;
const CHUNK = 256 * 1024;

async function failureOf(promise: Promise<unknown>): Promise<AgentdError> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(thrown instanceof AgentdError)) throw new Error(`expected an AgentdError, got ${String(thrown)}`);
  return thrown;
}

describe("an answer larger than any model writes", () => {
  it("cuts the call off past the limit, says why and what to check, and does not retry it", async () => {
    server.enqueue(textReply("z".repeat(OVER), { chunkSize: CHUNK }));
    const error = await failureOf(
      testClient(server.url).complete(request, { signal: new AbortController().signal }),
    );

    expect(error.code).toBe("LLM_BAD_RESPONSE");
    expect(error.message).toMatch(/streamed an answer of more than 4,194,304 characters/);
    expect(error.hint).toMatch(/check the model server/);
    expect(server.chatRequests).toHaveLength(1);
  });

  it("counts tool-call arguments too, and tries the fallback model", async () => {
    server.enqueue(
      toolCallReply({ name: "shell", arguments: { command: "y".repeat(OVER) } }, { chunkSize: CHUNK }),
      textReply("a sane answer"),
    );
    const response = await testClient(server.url).complete(request, {
      signal: new AbortController().signal,
      fallbackModels: ["m2"],
    });

    expect(response.text).toBe("a sane answer");
    expect(server.chatRequests.map((sent) => sent.body?.model)).toEqual(["m1", "m2"]);
  });

  it("tells what the cut-off call spent, whether the fallback answers or not", async () => {
    server.enqueue(
      textReply("z".repeat(OVER), { chunkSize: CHUNK }),
      textReply("z".repeat(OVER), { chunkSize: CHUNK }),
    );
    const spent: number[] = [];
    const error = await failureOf(
      testClient(server.url, {
        prices: { m1: { input: 1, output: 2 }, m2: { input: 1, output: 2 } },
      }).complete(request, {
        signal: new AbortController().signal,
        fallbackModels: ["m2"],
        onSpent: ({ usage, costUsd }) => spent.push(usage.completion_tokens, costUsd),
      }),
    );

    expect(error.code).toBe("LLM_BAD_RESPONSE");
    // Each call was cut just past 4 Mi characters, some 1 Mi tokens at a quarter token a character.
    expect(spent).toHaveLength(4);
    for (const tokens of [spent[0], spent[2]]) {
      expect(tokens).toBeGreaterThan(MAX_ANSWER_CHARACTERS / 4);
      expect(tokens).toBeLessThanOrEqual(OVER / 4);
    }
    expect(spent[1]).toBeGreaterThan(0);
  });

  it("fails at once on a line of the stream longer than 4 MiB, before reading the rest of it", async () => {
    // The whole answer in one server-sent event: one line, never ended within the limit.
    server.enqueue(textReply("z".repeat(5 * 1024 * 1024), { chunkSize: 5 * 1024 * 1024 }));
    const error = await failureOf(
      testClient(server.url).complete(request, { signal: new AbortController().signal }),
    );

    expect(error.code).toBe("LLM_BAD_RESPONSE");
    expect(error.message).toMatch(/sent a line of more than 4 MiB without a line end/);
    expect(server.chatRequests).toHaveLength(1);
  });
});
