import { once } from "node:events";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";

/** One tool call the scripted model makes. `arguments` may be an object (JSON-encoded) or raw text. */
export interface ScriptedToolCall {
  name: string;
  arguments?: Record<string, unknown> | string;
  /** Default: `call_<n>`, unique per server. */
  id?: string;
}

/** How a reply breaks off: after `after` chunks (streaming) or instead of the body (non-streaming). */
export interface ScriptedInterruption {
  after: number;
  /** drop: socket destroyed · bad_json: a chunk that is not JSON · truncate: end without [DONE] · stall: silence forever. */
  with: "drop" | "bad_json" | "truncate" | "stall";
}

/** A model answer: text and/or tool calls, streamed when the request asks for it. */
export interface ScriptedCompletion {
  type: "completion";
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: "stop" | "tool_calls" | "length";
  /** Default: estimated from the request and reply sizes (4 characters per token). */
  usage?: { promptTokens: number; completionTokens: number };
  /** Characters of text per streamed chunk (default 16). */
  chunkSize?: number;
  delayBeforeFirstChunkMs?: number;
  delayBetweenChunksMs?: number;
  interrupt?: ScriptedInterruption;
  /** Send a reply with an empty `choices` array. */
  noChoices?: boolean;
}

/** A reply that is an HTTP error (429 with retry-after, 500, 503...). */
export interface ScriptedHttpError {
  type: "http_error";
  status: number;
  retryAfter?: string;
  message?: string;
}

/** The server accepts the request and never answers. */
export interface ScriptedHang {
  type: "hang";
}

export type ScriptedReplyValue = ScriptedCompletion | ScriptedHttpError | ScriptedHang;

/** A scripted reply, or a function computing it from the request it answers. */
export type ScriptedReply =
  ScriptedReplyValue | ((request: RecordedRequest) => ScriptedReplyValue | Promise<ScriptedReplyValue>);

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (chat completions), or undefined. */
  body: ChatRequestBody | undefined;
  /** The body's text as it arrived. */
  bodyText: string;
  /** True once the client closed the connection before the reply was complete. */
  closedByClient: boolean;
}

/** The parts of a chat completions request tests look at; everything else is kept as sent. */
export interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** Builds a text answer. */
export function textReply(text: string, extra: Partial<ScriptedCompletion> = {}): ScriptedCompletion {
  return { type: "completion", text, ...extra };
}

/** Builds an answer calling one or several tools. */
export function toolCallReply(
  calls: ScriptedToolCall | ScriptedToolCall[],
  extra: Partial<ScriptedCompletion> = {},
): ScriptedCompletion {
  return { type: "completion", toolCalls: Array.isArray(calls) ? calls : [calls], ...extra };
}

/** Builds an HTTP error reply. */
export function httpErrorReply(status: number, retryAfter?: string): ScriptedHttpError {
  return { type: "http_error", status, ...(retryAfter === undefined ? {} : { retryAfter }) };
}

export interface ScriptedLlmServer {
  /** Base URL including `/v1`, for the `openai` SDK's `baseURL`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Chat completion requests only. */
  readonly chatRequests: RecordedRequest[];
  /** Replies queued and not yet used. */
  readonly pending: number;
  /** Queues replies, answered in order, one per chat completion request. */
  enqueue(...replies: ScriptedReply[]): void;
  /** The reply used when the queue is empty (default: a 500 saying nothing was queued). */
  setDefaultReply(reply: ScriptedReply | undefined): void;
  /** Resolves once `count` chat completion requests have arrived in total. */
  waitForChatRequests(count: number, timeoutMilliseconds?: number): Promise<RecordedRequest[]>;
  /** Stops the server, cutting any open connection (hanging replies included). */
  close(): Promise<void>;
}

/** Starts a scripted OpenAI-compatible chat completions server on 127.0.0.1, on a free port. */
export async function startScriptedLlmServer(): Promise<ScriptedLlmServer> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const requestListeners = new Set<() => void>();
  const closing = new AbortController();
  let defaultReply: ScriptedReply | undefined;
  let callCounter = 0;

  const server = createServer((request, response) => {
    void handle(request, response).catch(() => response.destroy());
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const recorded: RecordedRequest = {
      method: request.method ?? "GET",
      path,
      headers: { ...request.headers },
      body: parseBody(raw),
      bodyText: raw,
      closedByClient: false,
    };
    requests.push(recorded);
    response.on("close", () => {
      if (!response.writableFinished) recorded.closedByClient = true;
    });
    const local = AbortSignal.any([closing.signal, closedSignal(response)]);

    if (request.method === "GET" && path.endsWith("/models")) {
      return sendJson(response, 200, { object: "list", data: [{ id: "scripted-model", object: "model" }] });
    }
    if (request.method !== "POST" || !path.endsWith("/chat/completions") || !recorded.body) {
      return sendJson(response, 404, { error: { message: `no route ${request.method} ${path}` } });
    }
    chatRequests.push(recorded);
    for (const listener of [...requestListeners]) listener();

    const next = queue.shift() ?? defaultReply;
    if (!next) {
      return sendJson(response, 500, { error: { message: "scripted server: no reply queued" } });
    }
    const reply = typeof next === "function" ? await next(recorded) : next;
    await answer(reply, recorded.body, response, local);
  }

  async function answer(
    reply: ScriptedReplyValue,
    body: ChatRequestBody,
    response: ServerResponse,
    signal: AbortSignal,
  ): Promise<void> {
    if (reply.type === "hang") return;
    if (reply.type === "http_error") {
      const headers: Record<string, string> =
        reply.retryAfter === undefined ? {} : { "retry-after": reply.retryAfter };
      const message = reply.message ?? `scripted error ${reply.status}`;
      return sendJson(response, reply.status, { error: { message, type: "scripted" } }, headers);
    }
    const completion = materialize(reply, body, () => `call_${++callCounter}`);
    try {
      if (reply.delayBeforeFirstChunkMs) await delay(reply.delayBeforeFirstChunkMs, undefined, { signal });
      if (body.stream) await stream(completion, reply, body, response, signal);
      else sendWhole(completion, reply, response);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  const address = await listen(server);
  const url = `http://127.0.0.1:${address.port}/v1`;

  return {
    url,
    requests,
    chatRequests,
    get pending() {
      return queue.length;
    },
    enqueue: (...replies) => void queue.push(...replies),
    setDefaultReply: (reply) => void (defaultReply = reply),
    waitForChatRequests: (count, timeoutMilliseconds = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (chatRequests.length < count) return false;
          clearTimeout(timer);
          requestListeners.delete(check);
          resolve(chatRequests);
          return true;
        };
        const timer = setTimeout(() => {
          requestListeners.delete(check);
          reject(new Error(`only ${chatRequests.length} of ${count} chat requests arrived`));
        }, timeoutMilliseconds);
        if (!check()) requestListeners.add(check);
      }),
    close: async () => {
      closing.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

interface MaterializedCompletion {
  id: string;
  model: string;
  text: string | undefined;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: "stop" | "tool_calls" | "length";
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function materialize(
  reply: ScriptedCompletion,
  body: ChatRequestBody,
  nextCallId: () => string,
): MaterializedCompletion {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? nextCallId(),
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const replyCharacters =
    (reply.text ?? "").length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0);
  const prompt = reply.usage?.promptTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = reply.usage?.completionTokens ?? Math.ceil(replyCharacters / 4);
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    model: body.model,
    text: reply.text,
    toolCalls,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

function sendWhole(
  completion: MaterializedCompletion,
  reply: ScriptedCompletion,
  response: ServerResponse,
): void {
  const message = {
    role: "assistant",
    content: completion.text ?? null,
    ...(completion.toolCalls.length === 0
      ? {}
      : {
          tool_calls: completion.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments },
          })),
        }),
  };
  const payload = JSON.stringify({
    id: completion.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: completion.model,
    choices: reply.noChoices ? [] : [{ index: 0, message, finish_reason: completion.finishReason }],
    usage: completion.usage,
  });
  const interruption = reply.interrupt?.with;
  if (interruption === "stall") return void response.writeHead(200, { "content-type": "application/json" });
  if (interruption === "drop") return void response.destroy();
  if (interruption === "bad_json" || interruption === "truncate") {
    response.writeHead(200, { "content-type": "application/json" });
    return void response.end(
      interruption === "bad_json" ? "{not json" : payload.slice(0, payload.length / 2),
    );
  }
  response.writeHead(200, { "content-type": "application/json" });
  response.end(payload);
}

/** Splits the completion into SSE chunks the way OpenAI streams: text deltas, then tool-call deltas in pieces. */
function streamChunks(
  completion: MaterializedCompletion,
  reply: ScriptedCompletion,
  body: ChatRequestBody,
): unknown[] {
  const base = { id: completion.id, object: "chat.completion.chunk", created: 0, model: completion.model };
  const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: unknown[] = [choice({ role: "assistant", content: "" })];
  const size = Math.max(1, reply.chunkSize ?? 16);
  const text = completion.text ?? "";
  for (let start = 0; start < text.length; start += size)
    chunks.push(choice({ content: text.slice(start, start + size) }));
  completion.toolCalls.forEach((call, index) => {
    chunks.push(
      choice({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    const pieceSize = Math.max(1, Math.ceil(call.arguments.length / 3));
    for (let start = 0; start < call.arguments.length; start += pieceSize) {
      const piece = call.arguments.slice(start, start + pieceSize);
      chunks.push(choice({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  if (reply.noChoices) chunks.splice(0, chunks.length, { ...base, choices: [] });
  else chunks.push(choice({}, completion.finishReason));
  if (body.stream_options?.include_usage) chunks.push({ ...base, choices: [], usage: completion.usage });
  return chunks;
}

async function stream(
  completion: MaterializedCompletion,
  reply: ScriptedCompletion,
  body: ChatRequestBody,
  response: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  response.flushHeaders();
  const chunks = streamChunks(completion, reply, body);
  const breakAt = reply.interrupt ? Math.min(reply.interrupt.after, chunks.length) : chunks.length + 1;
  for (const [index, chunk] of chunks.entries()) {
    if (index === breakAt) break;
    if (index > 0 && reply.delayBetweenChunksMs)
      await delay(reply.delayBetweenChunksMs, undefined, { signal });
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  if (!reply.interrupt) return void response.end("data: [DONE]\n\n");
  switch (reply.interrupt.with) {
    case "stall":
      return;
    case "drop":
      return void response.destroy();
    case "truncate":
      return void response.end();
    case "bad_json":
      response.write('data: {"choices": [ broken\n\n');
      return void response.end("data: [DONE]\n\n");
  }
}

function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(value));
}

function parseBody(raw: string): ChatRequestBody | undefined {
  try {
    return raw ? (JSON.parse(raw) as ChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function closedSignal(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once("close", () => controller.abort());
  return controller.signal;
}

async function listen(server: ReturnType<typeof createServer>): Promise<AddressInfo> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server.address() as AddressInfo;
}
