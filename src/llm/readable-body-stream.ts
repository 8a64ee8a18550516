import { AgentdError } from "../errors/agentd-error.js";
import type { Readable } from "node:stream";
import { MAX_PLAIN_ANSWER_BYTES, type PlainAnswerHead, plainAnswerTooLarge } from "./plain-answer-limit.js";

/**
 * A web stream of a Node readable's chunks (an undici answer's body), for a `Response`, cut off
 * with an error past MAX_PLAIN_ANSWER_BYTES or a line past MAX_LINE_BYTES. Not
 * `Readable.toWeb`: on Node 20 its stream, cancelled before it is read (the SDK cancels a body it
 * does not need), goes on getting the socket's data and throws "Controller is already closed" out
 * of a later tick, which ends the process. Not `ReadableStream.from`: its cancel, before the first
 * read, leaves the body (and its socket) open until undici's body timeout. Here a cancel destroys
 * the body, which lets its socket go, and each read takes the next chunk as it is.
 */
export function readableBodyStream(body: Readable, head: PlainAnswerHead): ReadableStream<Uint8Array> {
  // The body's error (an abort, a reset socket, the cancel's own) reaches the reader through the
  // iterator; before its first read nothing else listens, and an unheard error ends the process.
  body.on("error", ignoreError);
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  let sinceLineEnd = 0;
  let bytes = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done === true) return controller.close();
      bytes += next.value.length;
      const checked =
        bytes > MAX_PLAIN_ANSWER_BYTES
          ? { error: plainAnswerTooLarge(head.status, head.contentType) }
          : guardedChunk(next.value, sinceLineEnd);
      if (checked.error !== undefined) {
        body.destroy();
        return controller.error(checked.error);
      }
      sinceLineEnd = checked.sinceLineEnd;
      controller.enqueue(next.value);
    },
    cancel(reason) {
      body.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}

/**
 * The longest line of a model server's answer read (4 MiB): an SSE event carries one chunk of an
 * answer, a few hundred bytes from a real server. The SDK joins a line's pieces anew with each
 * piece that arrives, so a server sending 50 MB without a line end held the event loop for 13 s at
 * a time; past this the call fails at once.
 */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
const LINE_FEED = 0x0a;

function lineTooLong(): AgentdError {
  return new AgentdError(
    "LLM_BAD_RESPONSE",
    `the model server sent a line of more than ${MAX_LINE_BYTES / 1024 / 1024} MiB without a line end: the call was cut off there`,
    { hint: "no OpenAI-compatible server streams that; check the model server or the proxy in front of it" },
  );
}

/**
 * The bytes since the last line end once `chunk` is added to `sinceLineEnd` of them, or the error
 * that ends the answer when they pass MAX_LINE_BYTES.
 */
export function guardedChunk(
  chunk: Uint8Array,
  sinceLineEnd: number,
): { sinceLineEnd: number; error?: undefined } | { error: AgentdError } {
  const lineEnd = chunk.lastIndexOf(LINE_FEED);
  const since = lineEnd === -1 ? sinceLineEnd + chunk.length : chunk.length - lineEnd - 1;
  return since > MAX_LINE_BYTES ? { error: lineTooLong() } : { sinceLineEnd: since };
}

/** An error already on its way to the stream's reader. */
export function ignoreError(): void {}
