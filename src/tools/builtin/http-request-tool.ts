import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { defineTool } from "../tool-definition.js";
import { readCappedBody } from "./read-capped-body.js";

/** Response headers worth showing the model; the rest is noise or cookies. */
const SHOWN_HEADERS = ["content-type", "content-length", "location", "retry-after"];

const HttpRequestArguments = z.strictObject({
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]).describe("The HTTP method."),
  url: z.string().min(1).describe("An absolute http:// or https:// URL."),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Request headers, e.g. {"Authorization": "Bearer {{secret:github_token}}", "Accept": "application/json"}.',
    ),
  body: z.string().optional().describe("The request body as text (for JSON, also set Content-Type)."),
});

/** `http_request`: one HTTP(S) request; status line, a few headers and the body text back. */
export const httpRequestTool = defineTool({
  name: "http_request",
  description:
    "Send an HTTP or HTTPS request and get the status, content-type/location headers and the body as text. " +
    "Large bodies are cut. Use {{secret:name}} in headers for credentials.",
  schema: HttpRequestArguments,
  subject: (value) => ({ kind: "texts", texts: [value.url] }),
  run: async (value, context) => {
    const url = parseHttpUrl(value.url);
    const timeout = AbortSignal.timeout(context.settings.http_timeout);
    let response: Response;
    try {
      response = await fetch(url, {
        method: value.method,
        ...(value.headers ? { headers: value.headers } : {}),
        ...(value.body === undefined ? {} : { body: value.body }),
        redirect: "manual",
        signal: AbortSignal.any([context.signal, timeout]),
      });
    } catch (error) {
      context.signal.throwIfAborted();
      throw requestFailure(value.method, url, error, timeout.aborted, context.settings.http_timeout);
    }
    let body;
    try {
      body = await readCappedBody(response, context.settings.http_max_bytes);
    } catch (error) {
      context.signal.throwIfAborted();
      throw requestFailure(value.method, url, error, timeout.aborted, context.settings.http_timeout);
    }
    const headers = SHOWN_HEADERS.flatMap((name) => {
      const header = response.headers.get(name);
      return header === null ? [] : [`${name}: ${header}`];
    });
    const note = body.cut
      ? `\n[body cut: showing the first ${body.bytes} bytes; the limit is tools.http_max_bytes]`
      : "";
    const output = [
      `HTTP ${response.status} ${response.statusText}`.trimEnd(),
      ...headers,
      "",
      body.text + note,
    ];
    return {
      ok: response.status < 400,
      ...(response.status < 400 ? {} : { code: "TOOL_FAILED" }),
      output: output.join("\n"),
      ...(body.cut ? { truncated: true } : {}),
    };
  },
});

function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AgentdError("TOOL_BAD_ARGUMENTS", `"${text}" is not an absolute URL`, {
      hint: "write it as https://host/path",
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new AgentdError("TOOL_BAD_ARGUMENTS", `only http and https URLs are allowed, not ${url.protocol}`);
  }
  return url;
}

function requestFailure(
  method: string,
  url: URL,
  error: unknown,
  timedOut: boolean,
  timeout: number,
): AgentdError {
  if (timedOut) {
    return new AgentdError(
      "TOOL_TIMEOUT",
      `${method} ${url.origin}${url.pathname} got no complete answer within ${timeout} ms`,
      {
        hint: "try again later or ask for less",
      },
    );
  }
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return new AgentdError("TOOL_FAILED", `${method} ${url.origin}${url.pathname} failed: ${cause}`, {
    cause: error,
  });
}
