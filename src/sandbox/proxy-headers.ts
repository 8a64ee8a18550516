import http from "node:http";

/** Headers about one hop, never passed on (RFC 9110 §7.6.1), and the proxy's own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
/** Framing the proxy keeps whatever `Connection` lists. */
const KEPT = new Set(["content-length", "host"]);

/**
 * The headers a forwarded request carries upstream: the client's, less the hop-by-hop ones and any
 * node would refuse, `host` set to the target, and `transfer-encoding: chunked` again when the
 * client sent a chunked body (so node frames it rather than writing it bare).
 */
export function upstreamRequestHeaders(
  request: http.IncomingMessage,
  authority: string,
): http.OutgoingHttpHeaders {
  const headers = passedOn(request.headers);
  headers["host"] = authority;
  if (request.headers["transfer-encoding"] !== undefined && headers["content-length"] === undefined) {
    headers["transfer-encoding"] = "chunked";
  }
  return headers;
}

/** The headers of an upstream's response as the client gets them: the same filter. */
export function clientResponseHeaders(response: http.IncomingMessage): http.OutgoingHttpHeaders {
  return passedOn(response.headers);
}

/** The reason phrase to send on, or undefined (node's default) when it holds a byte node refuses. */
export function safeStatusMessage(message: string | undefined): string | undefined {
  return message !== undefined && /^[\t\x20-\x7e]{0,512}$/.test(message) ? message : undefined;
}

function passedOn(incoming: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const dropped = new Set(HOP_BY_HOP);
  for (const name of String(incoming["connection"] ?? "").split(",")) {
    const wanted = name.trim().toLowerCase();
    if (wanted !== "" && !KEPT.has(wanted)) dropped.add(wanted);
  }
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || dropped.has(name) || !isSendable(name, value)) continue;
    headers[name] = value;
  }
  return headers;
}

/** True when node's own checks (the ones that throw in setHeader and writeHead) accept the header. */
function isSendable(name: string, value: string | string[]): boolean {
  try {
    http.validateHeaderName(name);
    for (const each of Array.isArray(value) ? value : [value]) http.validateHeaderValue(name, each);
    return true;
  } catch {
    return false;
  }
}
