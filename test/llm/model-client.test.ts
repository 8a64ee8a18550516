import { describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import type { ChatMessage } from "../../src/llm/chat-message.js";
import { LlmError } from "../../src/llm/llm-error.js";
import type { RetryNotice } from "../../src/llm/model-client.js";
import { RunAbort, RunControl } from "../../src/run-vocabulary/run-control.js";
import { httpErrorReply, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { testClient } from "./client-settings.js";
import { withScriptedLlmServer } from "../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

const messages: ChatMessage[] = [
  { role: "system", content: "be brief" },
  { role: "user", content: "hello" },
];
const request = { model: "m1", messages };

async function failure(promise: Promise<unknown>): Promise<AgentdError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof AgentdError)) throw new Error(`expected an AgentdError, got ${String(error)}`);
  return error;
}

describe("ModelClient", () => {
  it("streams an answer with tool calls, usage and cost from the price table", async () => {
    server.enqueue(
      toolCallReply(
        [
          { name: "read_file", arguments: { path: "notes.md" } },
          { name: "shell", arguments: { command: "git log --oneline" } },
        ],
        { text: "Let me look.", usage: { promptTokens: 1_000, completionTokens: 500 } },
      ),
    );
    const client = testClient(server.url, { prices: { m1: { input: 2, output: 10 } } });
    const response = await client.complete(request, { signal: new AbortController().signal });

    expect(response.text).toBe("Let me look.");
    expect(
      response.toolCalls.map((call) => [call.function.name, JSON.parse(call.function.arguments)]),
    ).toEqual([
      ["read_file", { path: "notes.md" }],
      ["shell", { command: "git log --oneline" }],
    ]);
    expect(response.finishReason).toBe("tool_calls");
    expect(response.usage).toEqual({ prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 });
    expect(response.costUsd).toBeCloseTo(0.002 + 0.005, 10);
    const sent = server.chatRequests[0]?.body;
    expect(sent?.stream).toBe(true);
    expect(sent?.stream_options).toEqual({ include_usage: true });
    expect(sent?.messages).toEqual(messages);
  });

  it("costs nothing on a model missing from the price table", async () => {
    server.enqueue(textReply("ok", { usage: { promptTokens: 10, completionTokens: 5 } }));
    const response = await testClient(server.url, { prices: { other: { input: 1, output: 1 } } }).complete(
      request,
      { signal: new AbortController().signal },
    );
    expect(response.costUsd).toBe(0);
  });

  it("retries 429 and 5xx with back-off, honouring retry-after", async () => {
    server.enqueue(httpErrorReply(429, "1"), httpErrorReply(503), textReply("finally"));
    const retries: RetryNotice[] = [];
    const started = Date.now();
    const response = await testClient(server.url).complete(request, {
      signal: new AbortController().signal,
      onRetry: (notice) => retries.push(notice),
    });
    expect(response.text).toBe("finally");
    expect(server.chatRequests).toHaveLength(3);
    expect(retries.map((notice) => notice.error.status)).toEqual([429, 503]);
    expect(retries[0]?.delayMilliseconds).toBe(1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("does not retry a 400 and says what failed", async () => {
    server.enqueue(httpErrorReply(400));
    const error = await failure(
      testClient(server.url).complete(request, { signal: new AbortController().signal }),
    );
    expect(error.code).toBe("LLM_HTTP");
    expect(error.message).toContain("HTTP 400");
    expect(error.details).toMatchObject({ status: 400, model: "m1", endpoint: server.url });
    expect(server.chatRequests).toHaveLength(1);
  });

  it("types an LLM error: kind, status and retryable are fields, not details to look up", async () => {
    server.enqueue(httpErrorReply(401));
    const error = await failure(
      testClient(server.url).complete(request, { signal: new AbortController().signal }),
    );
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: "auth", status: 401, retryable: false, model: "m1" });
    expect(server.chatRequests).toHaveLength(1);
  });

  it.each([
    ["a bad JSON chunk", { after: 2, with: "bad_json" as const }, "LLM_BAD_RESPONSE"],
    ["a stream cut short without [DONE]", { after: 2, with: "truncate" as const }, "LLM_BAD_RESPONSE"],
    ["a dropped connection", { after: 2, with: "drop" as const }, "LLM_NETWORK"],
  ])("turns %s into a typed error after its retries", async (_name, interrupt, code) => {
    const broken = textReply("an answer that never completes", { chunkSize: 4, interrupt });
    server.enqueue(broken, broken);
    const error = await failure(
      testClient(server.url, { maxAttempts: 2 }).complete(request, { signal: new AbortController().signal }),
    );
    expect(error.code).toBe(code);
    expect(server.chatRequests).toHaveLength(2);
  });

  it("recovers when a retry of a broken stream succeeds", async () => {
    server.enqueue(
      textReply("partial answer", { interrupt: { after: 1, with: "truncate" } }),
      textReply("whole"),
    );
    const response = await testClient(server.url).complete(request, { signal: new AbortController().signal });
    expect(response.text).toBe("whole");
  });

  it("rejects an answer with no choices", async () => {
    server.enqueue(textReply("x", { noChoices: true }));
    const error = await failure(
      testClient(server.url, { maxAttempts: 1 }).complete(request, { signal: new AbortController().signal }),
    );
    expect(error.code).toBe("LLM_BAD_RESPONSE");
    expect(error.message).toContain("no choices");
  });

  it("times out on no first chunk, on silence mid-stream, and on a call that takes too long", async () => {
    const timeouts = { firstChunkMilliseconds: 300, idleMilliseconds: 300, callMilliseconds: 10_000 };
    const client = testClient(server.url, { maxAttempts: 1, timeouts });
    const signal = new AbortController().signal;

    server.enqueue({ type: "hang" });
    const hang = await failure(client.complete(request, { signal }));
    expect([hang.code, hang.message]).toEqual(["LLM_TIMEOUT", expect.stringContaining("no first chunk")]);

    server.enqueue(
      textReply("stalls after a while", { chunkSize: 3, interrupt: { after: 2, with: "stall" } }),
    );
    const stall = await failure(client.complete(request, { signal }));
    expect([stall.code, stall.message]).toEqual(["LLM_TIMEOUT", expect.stringContaining("went silent")]);

    const slowClient = testClient(server.url, {
      maxAttempts: 1,
      timeouts: { firstChunkMilliseconds: 5_000, idleMilliseconds: 5_000, callMilliseconds: 600 },
    });
    server.enqueue(textReply("a".repeat(40), { chunkSize: 1, delayBetweenChunksMs: 100 }));
    const slow = await failure(slowClient.complete(request, { signal }));
    expect([slow.code, slow.message]).toEqual(["LLM_TIMEOUT", expect.stringContaining("took too long")]);
    await expect.poll(() => server.chatRequests.every((sent) => sent.closedByClient)).toBe(true);
  });

  it("falls back to the next model when the first keeps failing", async () => {
    server.enqueue(httpErrorReply(500), httpErrorReply(500), textReply("from the fallback"));
    const fallbacks: string[] = [];
    const response = await testClient(server.url, { maxAttempts: 2 }).complete(request, {
      signal: new AbortController().signal,
      fallbackModels: ["m2"],
      onFallback: (from, to) => fallbacks.push(`${from}->${to}`),
    });
    expect(response.text).toBe("from the fallback");
    expect(response.model).toBe("m2");
    expect(server.chatRequests.map((sent) => sent.body?.model)).toEqual(["m1", "m1", "m2"]);
    expect(fallbacks).toEqual(["m1->m2"]);
  });

  it("opens the circuit after repeated failures, then lets one trial through after the cooldown", async () => {
    const client = testClient(server.url, {
      maxAttempts: 1,
      circuitBreaker: { failureThreshold: 2, cooldownMilliseconds: 300 },
    });
    const signal = new AbortController().signal;
    server.enqueue(httpErrorReply(502), httpErrorReply(502));
    expect((await failure(client.complete(request, { signal }))).code).toBe("LLM_HTTP");
    expect((await failure(client.complete(request, { signal }))).code).toBe("LLM_HTTP");
    const open = await failure(client.complete(request, { signal }));
    expect(open.code).toBe("LLM_CIRCUIT_OPEN");
    expect(server.chatRequests).toHaveLength(2);

    await expect.poll(() => client.breakers.of("m1").state, { timeout: 5_000 }).toBe("half_open");
    server.enqueue(textReply("back up"));
    expect((await client.complete(request, { signal })).text).toBe("back up");
    expect(client.breakers.of("m1").state).toBe("closed");
  });

  it("keys the circuit by model: a failing model opens only its own, fallbacks and other models still get calls", async () => {
    const client = testClient(server.url, {
      maxAttempts: 1,
      circuitBreaker: { failureThreshold: 1, cooldownMilliseconds: 60_000 },
    });
    const signal = new AbortController().signal;
    server.enqueue(httpErrorReply(500), textReply("from b"));
    const first = await client.complete(request, { signal, fallbackModels: ["m2"] });
    expect(first.text).toBe("from b");
    expect(client.breakers.of("m1").state).toBe("open");

    // m1's circuit is open: the call goes straight to the fallback, m1 is not called.
    server.enqueue(textReply("b again"));
    const second = await client.complete(request, { signal, fallbackModels: ["m2"] });
    expect(second.text).toBe("b again");
    // Another agent on another model of the same endpoint is not affected.
    server.enqueue(textReply("healthy"));
    expect((await client.complete({ model: "m3", messages }, { signal })).text).toBe("healthy");
    expect(server.chatRequests.map((sent) => sent.body?.model)).toEqual(["m1", "m2", "m2", "m3"]);
    // With no fallback left, the open circuit is the error.
    expect((await failure(client.complete(request, { signal }))).code).toBe("LLM_CIRCUIT_OPEN");
  });

  it("cuts a call off mid-stream when it crosses the budget", async () => {
    server.enqueue(textReply("word ".repeat(200), { chunkSize: 5, delayBetweenChunksMs: 5 }));
    const error = await failure(
      testClient(server.url).complete(request, {
        signal: new AbortController().signal,
        cutOff: (progress) => (progress.completionTokens > 20 ? "max_tokens 20 reached" : undefined),
      }),
    );
    expect(error.code).toBe("BUDGET_EXCEEDED");
    expect(error.message).toContain("max_tokens 20 reached");
    expect(server.chatRequests).toHaveLength(1);
    await expect.poll(() => server.chatRequests[0]?.closedByClient).toBe(true);
  });

  it("aborts the call in flight when the run is stopped, with the run's reason", async () => {
    server.enqueue(textReply("slow ".repeat(100), { chunkSize: 5, delayBetweenChunksMs: 50 }));
    const control = new RunControl();
    const pending = testClient(server.url).complete(request, { signal: control.signal });
    await server.waitForChatRequests(1);
    control.stop("user_stop");
    const error = await failure(pending);
    expect(error).toBeInstanceOf(RunAbort);
    expect((error as RunAbort).reason).toBe("user_stop");
    await expect.poll(() => server.chatRequests[0]?.closedByClient).toBe(true);
  });
});
