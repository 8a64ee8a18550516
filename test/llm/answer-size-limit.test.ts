import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { MAX_ANSWER_CHARACTERS } from "../../src/llm/answer-size-limit.js";
import { MAX_PLAIN_ANSWER_BYTES } from "../../src/llm/plain-answer-limit.js";
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

/** A model endpoint that answers every request with `status` and a body that never ends. */
async function endlessEndpoint(status: number, contentType: string): Promise<{ url: string }> {
  const line = Buffer.from(`{"error":"${"x".repeat(1000)}"}\n`.repeat(256));
  const endless = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { "content-type": contentType });
      const pump = () => {
        while (!response.destroyed && response.write(line));
      };
      response.on("drain", pump);
      pump();
    });
  });
  await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    endless.closeAllConnections();
    await new Promise((resolve) => endless.close(() => resolve(undefined)));
  });
  return { url: `http://127.0.0.1:${(endless.address() as AddressInfo).port}/v1` };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe.each([
  { connections: "the daemon's own connections", ownConnections: true },
  { connections: "the global fetch (agentd run)", ownConnections: false },
])("an answer that is not a stream and does not end, through $connections", ({ ownConnections }) => {
  it("cuts an error's body off past 4 MiB and says so, instead of reading it until the timeout", async () => {
    const endpoint = await endlessEndpoint(500, "application/json");
    const error = await failureOf(
      testClient(endpoint.url, { maxAttempts: 1, ownConnections }).complete(request, {
        signal: new AbortController().signal,
      }),
    );

    expect(error.code).toBe("LLM_HTTP");
    expect(error.message).toMatch(
      /answered HTTP 500: .*an answer of more than 4 MiB that is not a stream \(HTTP 500, application\/json\)/,
    );
    expect(error.message.length).toBeLessThan(1000);
  });

  it("cuts off a body sent instead of the stream asked for, and tries no second attempt", async () => {
    const endpoint = await endlessEndpoint(200, "application/json");
    const error = await failureOf(
      testClient(endpoint.url, { ownConnections }).complete(request, {
        signal: new AbortController().signal,
      }),
    );

    expect(error.code).toBe("LLM_BAD_RESPONSE");
    expect(error.message).toMatch(/more than 4 MiB that is not a stream \(HTTP 200, application\/json\)/);
    expect(error.hint).toMatch(/check the model server/);
    expect(MAX_PLAIN_ANSWER_BYTES).toBe(4 * 1024 * 1024);
  });

  it("counts a gzip-compressed body as decoded: 64 KiB on the wire that unpack past 4 MiB are cut off", async () => {
    // 64 MiB of the same error line packs into well under 100 KiB: the limit must see what it unpacks to.
    const packed = gzipSync(Buffer.from(`{"error":"${"x".repeat(1000)}"}\n`.repeat(64 * 1024)));
    expect(packed.length).toBeLessThan(MAX_PLAIN_ANSWER_BYTES / 16);
    const compressed = createServer((incoming, response) => {
      incoming.resume();
      incoming.on("end", () => {
        response.writeHead(500, { "content-type": "application/json", "content-encoding": "gzip" });
        response.end(packed);
      });
    });
    await new Promise<void>((resolve) => compressed.listen(0, "127.0.0.1", resolve));
    closers.push(async () => {
      compressed.closeAllConnections();
      await new Promise((resolve) => compressed.close(() => resolve(undefined)));
    });
    const url = `http://127.0.0.1:${(compressed.address() as AddressInfo).port}/v1`;
    const error = await failureOf(
      testClient(url, { maxAttempts: 1, ownConnections }).complete(request, {
        signal: new AbortController().signal,
      }),
    );

    expect(error.message).toMatch(
      /an answer of more than 4 MiB that is not a stream \(HTTP 500, application\/json\)/,
    );
    expect(error.message.length).toBeLessThan(1000);
  });
});
