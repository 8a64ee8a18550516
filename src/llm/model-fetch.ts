import type * as Undici from "undici";
import { decodedAnswerBody } from "./decoded-answer-body.js";
import { readableBodyStream } from "./readable-body-stream.js";
import { isStreamedAnswer, streamedAnswer } from "./streamed-answer.js";

/** The `fetch` the `openai` SDK calls, as its `fetch` option types it. */
export type SdkFetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body: `new Response` refuses one for them. */
const BODILESS_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The statuses `fetch` follows as redirects. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

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
    const url = new URL(input);
    const answer = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (init.method ?? "GET") as "GET",
      headers: headerList(init.headers),
      body: body ?? null,
      signal: init.signal ?? null,
    });
    if (REDIRECT_STATUSES.has(answer.statusCode) && answer.headers.location !== undefined) {
      // A redirect (rare for a model endpoint) is fetch's to follow, by its own rules: a 301 or
      // 302 to a POST goes on as a GET without the body, the key stays within the origin, 20 at
      // most. The request is sent again from the start: the answer was a redirect, so nothing of
      // it was done.
      await answer.body.dump();
      return undici.fetch(input, {
        ...(init as Parameters<typeof undici.fetch>[1]),
        dispatcher: agent,
      }) as unknown as Response;
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
    // Compressed though not asked to be (no accept-encoding is sent): decoded as fetch decodes it.
    const answerBody = decodedAnswerBody(answer.body, answer.headers["content-encoding"]);
    if (isStreamedAnswer(answer.statusCode, answer.headers["content-type"]))
      return streamedAnswer(answerBody, { status: answer.statusCode, headers });
    const contentType = headers.get("content-type") ?? "";
    return new Response(readableBodyStream(answerBody, { status: answer.statusCode, contentType }), {
      status: answer.statusCode,
      headers,
    });
  };
}

/** The request's headers as a flat name, value list (names lowercased), which undici sends as they are. */
function headerList(headers: RequestInit["headers"]): string[] {
  const list: string[] = [];
  for (const [name, value] of headers instanceof Headers ? headers : new Headers(headers))
    list.push(name, value);
  return list;
}
