import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  httpErrorReply,
  startScriptedLlmServer,
  textReply,
  toolCallReply,
  type ScriptedLlmServer,
} from "./scripted-llm-server.js";

let server: ScriptedLlmServer;
let client: OpenAI;

beforeEach(async () => {
  server = await startScriptedLlmServer();
  client = new OpenAI({ baseURL: server.url, apiKey: "test-key", maxRetries: 0, timeout: 10_000 });
});
afterEach(async () => {
  await server.close();
});

const ask = { model: "m1", messages: [{ role: "user" as const, content: "hi" }] };

async function readStream(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return "";
  return new Response(body).text();
}

describe("scripted LLM server", () => {
  it("answers a non-streaming text reply and records what was sent", async () => {
    server.enqueue(textReply("hello there", { usage: { promptTokens: 7, completionTokens: 3 } }));
    const completion = await client.chat.completions.create(ask);
    expect(completion.choices[0]?.message.content).toBe("hello there");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect(server.chatRequests[0]?.body?.messages).toEqual([{ role: "user", content: "hi" }]);
    expect(server.chatRequests[0]?.headers.authorization).toBe("Bearer test-key");
  });

  it("streams several tool calls split across chunks, with usage and [DONE]", async () => {
    server.enqueue(
      toolCallReply([
        { name: "read_file", arguments: { path: "a.txt" } },
        { name: "shell", arguments: { command: "ls -la" } },
      ]),
    );
    const stream = await client.chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const argumentsByIndex = new Map<number, string>();
    const names: string[] = [];
    let finishReason: string | null = null;
    let usageSeen = false;
    let argumentChunks = 0;
    for await (const chunk of stream) {
      if (chunk.usage) usageSeen = true;
      const choice = chunk.choices[0];
      if (!choice) continue;
      finishReason = choice.finish_reason ?? finishReason;
      for (const delta of choice.delta.tool_calls ?? []) {
        if (delta.function?.name) names.push(delta.function.name);
        if (delta.function?.arguments) argumentChunks += 1;
        argumentsByIndex.set(
          delta.index,
          (argumentsByIndex.get(delta.index) ?? "") + (delta.function?.arguments ?? ""),
        );
      }
    }
    expect(names).toEqual(["read_file", "shell"]);
    expect(JSON.parse(argumentsByIndex.get(0) ?? "")).toEqual({ path: "a.txt" });
    expect(JSON.parse(argumentsByIndex.get(1) ?? "")).toEqual({ command: "ls -la" });
    expect(argumentChunks).toBeGreaterThan(2);
    expect(finishReason).toBe("tool_calls");
    expect(usageSeen).toBe(true);
  });

  it("lets a reply be computed from the request", async () => {
    server.enqueue((request) => textReply(`you said ${String(request.body?.messages.at(-1)?.content)}`));
    const completion = await client.chat.completions.create(ask);
    expect(completion.choices[0]?.message.content).toBe("you said hi");
  });

  it("answers 429 with retry-after and 500 when the queue is empty", async () => {
    server.enqueue(httpErrorReply(429, "2"));
    const limited = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify(ask),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    const empty = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify(ask),
    });
    expect(empty.status).toBe(500);
    expect(await empty.text()).toContain("no reply queued");
  });

  it("breaks streams off: bad JSON chunk, truncation without [DONE], dropped connection", async () => {
    const body = JSON.stringify({ ...ask, stream: true });
    server.enqueue(
      textReply("a long answer in pieces", { chunkSize: 4, interrupt: { after: 2, with: "bad_json" } }),
    );
    const badJson = await readStream(
      (await fetch(`${server.url}/chat/completions`, { method: "POST", body })).body,
    );
    expect(badJson).toContain("broken");

    server.enqueue(
      textReply("a long answer in pieces", { chunkSize: 4, interrupt: { after: 3, with: "truncate" } }),
    );
    const truncated = await readStream(
      (await fetch(`${server.url}/chat/completions`, { method: "POST", body })).body,
    );
    expect(truncated.match(/^data: /gm)).toHaveLength(3);
    expect(truncated).not.toContain("[DONE]");

    server.enqueue(
      textReply("a long answer in pieces", { chunkSize: 4, interrupt: { after: 2, with: "drop" } }),
    );
    const dropped = await fetch(`${server.url}/chat/completions`, { method: "POST", body });
    await expect(readStream(dropped.body)).rejects.toThrow();
  });

  it("closes promptly while a reply hangs, and records the client going away", async () => {
    server.enqueue({ type: "hang" });
    const controller = new AbortController();
    const pending = client.chat.completions.create(ask, { signal: controller.signal });
    await server.waitForChatRequests(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => server.chatRequests[0]?.closedByClient, { timeout: 5_000 }).toBe(true);

    server.enqueue({ type: "hang" });
    const hanging = client.chat.completions.create(ask).catch((error: unknown) => error);
    await server.waitForChatRequests(2);
    await server.close();
    expect(await hanging).toBeInstanceOf(Error);
  });

  it("lists a model on GET /v1/models", async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toContain("scripted-model");
  });
});
