import type { Response } from "undici";
import { traceContextHeaders } from "../../telemetry/trace-scope.js";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { assertHostAllowed, lookupGuard } from "../../sandbox/network-access.js";
import { guardedLookup } from "../../sandbox/network-proxy.js";
import { defineTool } from "../tool-definition.js";
import { type CappedBody, readCappedBody } from "./read-capped-body.js";
import { timeoutSignal } from "../../util/timeout-signal.js";

/** Response headers worth showing the model; the rest is noise or cookies. */
const SHOWN_HEADERS = ["content-type", "content-length", "location", "retry-after"];

const HttpRequestArguments = z.strictObject({
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]).describe("The HTTP method."),
  url: z.url({ protocol: /^https?$/ }).describe("An absolute http:// or https:// URL."),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Request headers, e.g. {"Authorization": "Bearer {{secret:github_token}}", "Accept": "application/json"}.',
    ),
  body: z.string().optional().describe("The request body as text (for JSON, also set Content-Type)."),
});

/**
 * `http_request`: one HTTP(S) request; status line, a few headers and the body text back. Redirects
 * are shown, not followed: the next URL must pass the permission rules as a call of its own. The
 * agent's sandbox network (none / all / a host list) decides which hosts it may reach.
 */
export const httpRequestTool = defineTool({
  name: "http_request",
  description:
    "Send an HTTP or HTTPS request and get the status, content-type/location headers and the body as text. " +
    "Redirects are not followed (the location is shown). Large bodies are cut. " +
    "Use {{secret:name}} in headers for credentials.",
  schema: HttpRequestArguments,
  // Rules see every spelling that reaches the same place: a deny matching any one denies.
  subject: (value) => ({ kind: "texts", texts: urlSpellings(value.url) }),
  run: async (value, context) => {
    const url = new URL(value.url);
    // The path as the model wrote it, not percent-encoded the way fetch sends it: a secret in it is
    // then the plain value, which the redactor masks in every message, event and log line.
    const where = `${value.method} ${url.origin}${decodedPath(url.pathname)}`;
    const rule = await assertHostAllowed(context.sandbox, url);
    // Loaded at the first call: a daemon whose agents make none does not pay for undici at its start.
    const { Agent, fetch } = await import("undici");
    // The connection resolves the name through the same guard that checked it: a name that
    // answers a public address to the check and 127.0.0.1 to the connection reaches nothing.
    const dispatcher =
      rule === undefined
        ? undefined
        : new Agent({ connect: { lookup: guardedLookup(rule, lookupGuard(context.sandbox)) } });
    const timeout = timeoutSignal(context.settings.http_timeout);
    let response: Response;
    let body: CappedBody;
    try {
      response = await fetch(url, {
        method: value.method,
        headers: withTraceContext(value.headers, context.signal),
        ...(value.body === undefined ? {} : { body: value.body }),
        redirect: "manual",
        signal: AbortSignal.any([context.signal, timeout]),
        ...(dispatcher === undefined ? {} : { dispatcher }),
      });
      body = await readCappedBody(response, context.settings.http_max_bytes);
    } catch (error) {
      context.signal.throwIfAborted();
      if (timeout.aborted) {
        throw new AgentdError(
          "TOOL_TIMEOUT",
          `${where} got no complete answer within ${context.settings.http_timeout} ms`,
          { hint: "try again later or ask for less" },
        );
      }
      const cause =
        error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new AgentdError("TOOL_FAILED", `${where} failed: ${cause}`, { cause: error });
    } finally {
      void dispatcher?.destroy().catch(() => undefined);
    }
    const headers = SHOWN_HEADERS.flatMap((name) => {
      const header = response.headers.get(name);
      return header === null ? [] : [`${name}: ${header}`];
    });
    const note = body.cut
      ? `\n[body cut: showing the first ${body.bytes} bytes; the limit is tools.http_max_bytes]`
      : "";
    const status = `HTTP ${response.status} ${response.statusText}`.trimEnd();
    const ok = response.status < 400;
    return {
      ok,
      ...(ok ? {} : { code: "TOOL_FAILED" }),
      // A secret the server echoed may be split by the cut: mask the piece before the note.
      output: [
        status,
        ...headers,
        "",
        (body.cut ? context.redactPiece(body.text, "end") : body.text) + note,
      ].join("\n"),
      ...(body.cut ? { truncated: true } : {}),
    };
  },
});

/**
 * The URL as written, as parsed (`href`: scheme and host lowercased, `\\` read as `/`, `%65` in the
 * host decoded, default port dropped, `/` added to a bare host), a canonical form without user
 * info, fragment or the host's trailing dot: `https://x@evil.com.:443/a#b` → `https://evil.com/a`,
 * and that form with the path as most servers route it: percent-decoded, repeated slashes
 * collapsed (`/%61dmin//x` and `/admin%2Fx` → `/admin/x`).
 */
export function urlSpellings(written: string): string[] {
  const url = new URL(written);
  const hostname = url.hostname.replace(/\.$/, "");
  const port = url.port === "" ? "" : `:${url.port}`;
  const origin = `${url.protocol}//${hostname}${port}`;
  const canonical = `${origin}${url.pathname}${url.search}`;
  const routed = `${origin}${routedPath(url.pathname)}${url.search}`;
  return [...new Set([written, url.href, canonical, routed])];
}

function routedPath(pathname: string): string {
  return decodedPath(pathname).replace(/\/{2,}/g, "/");
}

/** Each path segment percent-decoded where it decodes (`%2F` stays inside its segment). */
function decodedPath(pathname: string): string {
  const decoded = pathname.split("/").map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  return decoded.join("/");
}

/**
 * The request's headers with the tool call's `traceparent` (and `tracestate`) when the run is
 * traced, unless the model set its own (any spelling).
 */
function withTraceContext(
  headers: Record<string, string> | undefined,
  signal: AbortSignal,
): Record<string, string> {
  const given = headers ?? {};
  const named = new Set(Object.keys(given).map((name) => name.toLowerCase()));
  if (named.has("traceparent") || named.has("tracestate")) return given;
  return { ...traceContextHeaders(signal), ...given };
}
