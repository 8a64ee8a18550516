import { AgentdError } from "../errors/agentd-error.js";

/**
 * The most bytes of an answer that is not a stream read (4 MiB): an error's JSON (which the SDK
 * reads whole and makes the error's message), or a body a server sent instead of the stream asked
 * for. A few hundred bytes from a real server; a server (or a proxy) that sends on without end
 * otherwise filled the daemon's memory until the call's first-chunk timeout (1 GB in 5 s on
 * loopback). Past it the answer is cut off with an error saying so.
 */
export const MAX_PLAIN_ANSWER_BYTES = 4 * 1024 * 1024;

/** The error that cuts off an answer that is not a stream past MAX_PLAIN_ANSWER_BYTES. */
export function plainAnswerTooLarge(status: number, contentType: string): AgentdError {
  return new AgentdError(
    "LLM_BAD_RESPONSE",
    `the model server sent an answer of more than ${MAX_PLAIN_ANSWER_BYTES / 1024 / 1024} MiB that is not a stream ` +
      `(HTTP ${status}, ${contentType || "no content type"}): the call was cut off there`,
    { hint: "no OpenAI-compatible server answers that; check the model server or the proxy in front of it" },
  );
}

/** What an answer that is not a stream said of itself, for the error that cuts it off. */
export interface PlainAnswerHead {
  status: number;
  contentType: string;
}

/**
 * `response` (from the global `fetch`) with its body cut off past MAX_PLAIN_ANSWER_BYTES when it is
 * not a stream (text/event-stream), as model-fetch.ts cuts the answers of its own connections.
 */
export function withPlainAnswerLimit(response: Response): Response {
  const contentType = response.headers.get("content-type") ?? "";
  if (response.body === null || contentType.toLowerCase().startsWith("text/event-stream")) return response;
  const head = { status: response.status, contentType };
  let bytes = 0;
  const limited = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.length;
        if (bytes > MAX_PLAIN_ANSWER_BYTES)
          controller.error(plainAnswerTooLarge(head.status, head.contentType));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(limited, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
