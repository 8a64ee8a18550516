import type { Readable } from "node:stream";
import { guardedChunk, ignoreError } from "./readable-body-stream.js";

/**
 * What the `openai` SDK reads of a streamed answer's body: it iterates the body when the body is
 * async-iterable (`ReadableStreamToAsyncIterable` in its shims) and ends it early through the
 * iterator's `return` (`CancelReadableStream`); `cancel` is a web stream's way to the same end.
 */
export interface AnswerChunks extends AsyncIterable<Uint8Array> {
  cancel(reason?: unknown): Promise<void>;
}

/**
 * A successful streamed answer (`text/event-stream`) as a `Response` whose body is the socket's
 * chunks, iterated as they come: no web `ReadableStream` between them. On Node 20 making one such
 * stream per model call (its constructor makes it transferable) and passing every chunk through
 * its reader and a `pull` cost about 3 % of the daemon's CPU per loop round. The SDK reads such a
 * body only by iterating it (see AnswerChunks); every other answer (an error's JSON, a redirect)
 * is a whole `Response` as before, read with `text()` or `json()`.
 */
export function streamedAnswer(body: Readable, init: ResponseInit): Response {
  const response = new Response(null, init);
  Object.defineProperty(response, "body", { value: answerChunks(body), enumerable: true });
  return response;
}

/** Whether an answer of this status and content type is a stream the SDK iterates. */
export function isStreamedAnswer(statusCode: number, contentType: string | string[] | undefined): boolean {
  if (statusCode < 200 || statusCode >= 300 || typeof contentType !== "string") return false;
  return contentType.toLowerCase().startsWith("text/event-stream");
}

/**
 * The body's chunks, each checked for an endless line (readable-body-stream.ts); ending early
 * destroys the body. Once the chunks end, fail or are ended early, the body is let go of, as a web
 * stream lets go of its source once closed: the SDK holds the `Response` a while longer, and the
 * body holds undici's request with its text (the whole conversation), which was otherwise kept
 * past the next young-generation collection and promoted, some 14 MB a 200-round run.
 */
function answerChunks(body: Readable): AnswerChunks {
  // The body's error (an abort, a reset socket) reaches the reader through the iterator; before
  // its first read nothing else listens, and an unheard error ends the process.
  body.on("error", ignoreError);
  let source: Readable | undefined = body;
  let chunks: AsyncIterator<Uint8Array> | undefined;
  let sinceLineEnd = 0;
  const release = () => {
    source = undefined;
    chunks = undefined;
  };
  const end = async (reason?: unknown): Promise<IteratorReturnResult<undefined>> => {
    source?.destroy(reason instanceof Error ? reason : undefined);
    release();
    return { done: true, value: undefined };
  };
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      if (source === undefined) return { done: true, value: undefined };
      chunks ??= source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
      let next: IteratorResult<Uint8Array>;
      try {
        next = await chunks.next();
      } catch (error) {
        release();
        throw error;
      }
      if (next.done === true) {
        release();
        return next;
      }
      const checked = guardedChunk(next.value, sinceLineEnd);
      if (checked.error !== undefined) {
        await end();
        throw checked.error;
      }
      sinceLineEnd = checked.sinceLineEnd;
      return next;
    },
    return: () => end(),
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return {
    [Symbol.asyncIterator]: () => iterator,
    cancel: async (reason) => {
      await end(reason);
    },
  };
}
