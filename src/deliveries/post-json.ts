import { timeoutSignal } from "../util/timeout-signal.js";
import type { AttemptOutcome } from "./attempt-outcome.js";

/** How long a receiver gets to answer one attempt. */
const REQUEST_TIMEOUT_MILLISECONDS = 30_000;
/** Of a refusal's body, what is kept in the attempt's error. */
const ERROR_BODY_CHARACTERS = 300;
/**
 * Of a refusal's body, what is read at most: a receiver answering 500 with an endless body must not
 * fill the daemon's memory for the 30 s the attempt may last.
 */
const ERROR_BODY_BYTES = 16 * 1_024;

/**
 * POSTs a JSON body to the target's own URL. A redirect is never followed (to another host or
 * not): it is a failure, as is any answer but 2xx. 408, 429 and 5xx answers and network failures
 * may be retried (with the receiver's `retry-after`); other answers end the delivery. The request
 * goes out from the daemon directly: the agent's sandbox and its host list have no part in it.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  timeoutMilliseconds = REQUEST_TIMEOUT_MILLISECONDS,
): Promise<AttemptOutcome> {
  const where = `POST ${originOf(url)}`;
  // Loaded at the first delivery: a daemon that posts none does not pay for undici at its start.
  const { fetch } = await import("undici");
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "agentd", ...headers },
      body,
      redirect: "manual",
      signal: AbortSignal.any([signal, timeoutSignal(timeoutMilliseconds)]),
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return { ok: false, error: `${where} failed: ${cause}`, retryable: true };
  }
  const statusCode = response.status;
  if (statusCode >= 200 && statusCode < 300) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: true, statusCode };
  }
  // A body sent slowly until the attempt's time ran out: what came is kept, and said to be cut
  // (before the excerpt: a cut excerpt ends the error, where a half-sent secret is masked).
  const { text, ended } = await readStart(response.body, ERROR_BODY_BYTES);
  const trimmed = text.trim();
  const excerpt = trimmed.slice(0, ERROR_BODY_CHARACTERS);
  const cut = ended === undefined ? "" : ` (the rest of its answer did not come: ${ended})`;
  if (statusCode >= 300 && statusCode < 400) {
    const error = `${where} answered ${statusCode} (a redirect to ${response.headers.get("location") ?? "?"}): not followed`;
    return { ok: false, error, retryable: false, statusCode };
  }
  const retryable = statusCode === 408 || statusCode === 429 || statusCode >= 500;
  return {
    ok: false,
    error: `${where} answered ${statusCode}${cut}${excerpt ? `: ${excerpt}` : ""}`,
    retryable,
    statusCode,
    retryAfter: response.headers.get("retry-after"),
    ...(trimmed.length > ERROR_BODY_CHARACTERS || (excerpt && cut) ? { cutAtEnd: true } : {}),
  };
}

/**
 * The first `maxBytes` of a body (as UTF-8), the rest left unread and the stream cancelled. A body
 * that ends early (the attempt's timeout, a cut connection) gives what came before, with `ended`
 * saying why.
 */
async function readStart(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ text: string; ended?: string }> {
  if (body === null) return { text: "" };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  let ended: string | undefined;
  try {
    while (read < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const piece = value.subarray(0, maxBytes - read);
      read += piece.length;
      text += decoder.decode(piece, { stream: true });
    }
  } catch (error) {
    ended = endedBecause(error);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { text: text + decoder.decode(), ...(ended === undefined ? {} : { ended }) };
}

/** Why a body stopped coming, in a few words. */
function endedBecause(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "the attempt timed out";
  if (error instanceof Error && error.name === "AbortError") return "the attempt was stopped";
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/** The scheme, host and port only: a URL's path may hold a token (Slack's, Discord's, Telegram's). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the target";
  }
}
