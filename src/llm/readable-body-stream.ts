import type { Readable } from "node:stream";

/**
 * A web stream of a Node readable's chunks (an undici answer's body), for a `Response`. Not
 * `Readable.toWeb`: on Node 20 its stream, cancelled before it is read (the SDK cancels a body it
 * does not need), goes on getting the socket's data and throws "Controller is already closed" out
 * of a later tick, which ends the process. Not `ReadableStream.from`: its cancel, before the first
 * read, leaves the body (and its socket) open until undici's body timeout. Here a cancel destroys
 * the body, which lets its socket go, and each read takes the next chunk as it is.
 */
export function readableBodyStream(body: Readable): ReadableStream<Uint8Array> {
  // The body's error (an abort, a reset socket, the cancel's own) reaches the reader through the
  // iterator; before its first read nothing else listens, and an unheard error ends the process.
  body.on("error", ignoreError);
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      body.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}

/** An error already on its way to the stream's reader. */
function ignoreError(): void {}
