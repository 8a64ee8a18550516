/** A response body read up to a byte limit. */
export interface CappedBody {
  text: string;
  /** Bytes read (at most the limit). */
  bytes: number;
  /** The body went on past the limit; reading stopped there. */
  cut: boolean;
}

/** Reads at most `maxBytes` of a response body, then cancels the rest of the download. */
export async function readCappedBody(response: Response, maxBytes: number): Promise<CappedBody> {
  if (!response.body) return { text: "", bytes: 0, cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let cut = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - bytes;
      if (value.length > room) {
        chunks.push(value.subarray(0, room));
        bytes += room;
        cut = true;
        break;
      }
      chunks.push(value);
      bytes += value.length;
    }
  } finally {
    if (cut) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  let text = new TextDecoder("utf-8").decode(Buffer.concat(chunks));
  if (cut && text.endsWith("\uFFFD")) text = text.slice(0, -1);
  return { text, bytes, cut };
}
