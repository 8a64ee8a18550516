import type * as Undici from "undici";
import { type OutgoingRequest, redirectedRequest } from "./model-redirect.js";
import { readableBodyStream } from "./readable-body-stream.js";

/** The `fetch` the `openai` SDK calls, as its `fetch` option types it. */
export type SdkFetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body: `new Response` refuses one for them. */
const BODILESS_STATUSES = new Set([101, 103, 204, 205, 304]);

/** As many redirects as `fetch` follows. */
const MAX_REDIRECTIONS = 20;

/**
 * The model client's `fetch`: the request goes out through an undici `Agent`'s `request` (its own
 * kept-alive connections) and the answer comes back as a `Response` whose body streams the
 * socket's data. Node's global `fetch` (undici's `fetch`) builds a `Request` per call (its
 * headers, signal and finalizer), clones its body into a stream and runs the whole fetch
 * algorithm: about 40 % of a streamed call's main-thread CPU, paid by every run's every round and
 * by the last of 20 runs due in one second before its first request goes out. What the SDK gives
 * (a URL, a method, a `Headers`, a string body, a signal) is all a chat completion needs; anything
 * else (a stream or form body, a `Request`) goes to undici's `fetch` on the same connections.
 * Errors stay undici's own (a refused connection, a reset socket, an `AbortError` on abort), which
 * the SDK wraps as it wraps `fetch`'s.
 */
export function modelFetch(undici: Pick<typeof Undici, "Agent" | "fetch">): SdkFetch {
  const agent: Undici.Agent = new undici.Agent();
  return async (input, init = {}) => {
    const body = init.body;
    if (typeof input !== "string" || (body !== undefined && body !== null && typeof body !== "string")) {
      return undici.fetch(input as string, {
        ...(init as Parameters<typeof undici.fetch>[1]),
        dispatcher: agent,
      }) as unknown as Response;
    }
    let request: OutgoingRequest = {
      url: new URL(input),
      method: init.method ?? "GET",
      headers: headerList(init.headers),
      body: body ?? null,
    };
    let answer = await send(agent, request, init.signal);
    // Redirects are followed here, by fetch's rules (model-redirect.ts), not by undici's handler,
    // which sends a POST's body on after a 301 or 302, to any origin.
    for (let redirects = 0; ; redirects += 1) {
      const next = redirectedRequest(request, answer.statusCode, answer.headers.location);
      if (next === undefined) break;
      await answer.body.dump();
      if (redirects === MAX_REDIRECTIONS) {
        throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
      }
      request = next;
      answer = await send(agent, request, init.signal);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const each of value) headers.append(name, each);
      else if (value !== undefined) headers.append(name, value);
    }
    if (BODILESS_STATUSES.has(answer.statusCode)) {
      await answer.body.dump();
      return new Response(null, { status: answer.statusCode, headers });
    }
    return new Response(readableBodyStream(answer.body), { status: answer.statusCode, headers });
  };
}

/** One request through the agent's own connections. */
function send(
  agent: Undici.Agent,
  request: OutgoingRequest,
  signal: AbortSignal | null | undefined,
): Promise<Undici.Dispatcher.ResponseData> {
  return agent.request({
    origin: request.url.origin,
    path: `${request.url.pathname}${request.url.search}`,
    method: request.method as "GET",
    headers: request.headers,
    body: request.body,
    signal: signal ?? null,
  });
}

/**
 * The request's headers as a flat name, value list (names lowercased): what undici sends as they
 * are, and what a redirect (model-redirect.ts) filters.
 */
function headerList(headers: RequestInit["headers"]): string[] {
  const list: string[] = [];
  for (const [name, value] of headers instanceof Headers ? headers : new Headers(headers))
    list.push(name, value);
  return list;
}
