import { timeoutSignal } from "../util/timeout-signal.js";
import type { AttemptOutcome } from "./attempt-outcome.js";

/** How long a receiver gets to answer one attempt. */
const REQUEST_TIMEOUT_MILLISECONDS = 30_000;
/** Of a refusal's body, what is kept in the attempt's error. */
const ERROR_BODY_CHARACTERS = 300;
/**
 * Of a refusal's body, what is read (the rest is let go of with the connection): a receiver that
 * answered 500 with a body without end was otherwise read for the attempt's whole 30 s, into memory.
 */
const ERROR_BODY_READ_BYTES = 64 * 1024;

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
      signal: AbortSignal.any([signal, timeoutSignal(REQUEST_TIMEOUT_MILLISECONDS)]),
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
  const text = await headOf(response.body).catch(() => "");
  const trimmed = text.trim();
  const excerpt = trimmed.slice(0, ERROR_BODY_CHARACTERS);
  if (statusCode >= 300 && statusCode < 400) {
    const error = `${where} answered ${statusCode} (a redirect to ${response.headers.get("location") ?? "?"}): not followed`;
    return { ok: false, error, retryable: false, statusCode };
  }
  const retryable = statusCode === 408 || statusCode === 429 || statusCode >= 500;
  return {
    ok: false,
    error: `${where} answered ${statusCode}${excerpt ? `: ${excerpt}` : ""}`,
    retryable,
    statusCode,
    retryAfter: response.headers.get("retry-after"),
    ...(trimmed.length > ERROR_BODY_CHARACTERS ? { cutAtEnd: true } : {}),
  };
}

/** The first ERROR_BODY_READ_BYTES of `body` as text; the rest is never read. */
async function headOf(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (body === null) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < ERROR_BODY_READ_BYTES) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
      bytes += next.value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, ERROR_BODY_READ_BYTES).toString("utf8");
}

/** The scheme, host and port only: a URL's path may hold a token (Slack's, Discord's, Telegram's). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the target";
  }
}
