import { type Readable, type Transform, pipeline } from "node:stream";
import zlib from "node:zlib";

/** Content codings decoded before a body is dropped as undecodable (as undici's `fetch` caps them). */
const MAX_CODINGS = 5;

/**
 * An answer's body with its `content-encoding` undone, as `fetch` undoes it: gzip, deflate and br,
 * in the reverse of the order they were applied; an answer with a coding none of these, or more
 * than five, is given as it came. A server (or a proxy before it) that compresses though the
 * request did not ask for it would otherwise hand the SDK compressed bytes, which it reads as an
 * answer without a single event ("answered with no choices"). Decoded the way curl and `fetch`
 * decode, leniently: a stream cut short gives what arrived. Destroying the decoded body (a cancel,
 * a stop) destroys the socket's too.
 */
export function decodedAnswerBody(body: Readable, contentEncoding: string | string[] | undefined): Readable {
  if (contentEncoding === undefined) return body;
  const codings = [contentEncoding]
    .flat()
    .flatMap((value) => value.toLowerCase().split(","))
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0 || codings.length > MAX_CODINGS) return body;
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    const decoder = decoderOf(coding);
    if (decoder === undefined) return body;
    decoders.push(decoder);
  }
  // The pipeline's error reaches the reader through the last decoder; the callback only keeps it
  // from being thrown a second time.
  return pipeline([body, ...decoders], () => undefined) as unknown as Readable;
}

function decoderOf(coding: string): Transform | undefined {
  const lenient = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === "gzip" || coding === "x-gzip") return zlib.createGunzip(lenient);
  if (coding === "deflate") return zlib.createInflate(lenient);
  if (coding === "br")
    return zlib.createBrotliDecompress({
      flush: zlib.constants.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
    });
  return undefined;
}
