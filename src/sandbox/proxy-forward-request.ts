import http from "node:http";
import type net from "node:net";
import { pipeline } from "node:stream";
import { matchHostRule } from "../config/host-rules.js";
import type { ProxyContext } from "./proxy-context.js";
import { clientResponseHeaders, safeStatusMessage, upstreamRequestHeaders } from "./proxy-headers.js";
import { guardedLookup, hostRefusal, isAddressRefusal } from "./proxy-host-check.js";
import { refusalStatusText } from "./proxy-status-text.js";
import { forwardTarget } from "./proxy-target.js";

/**
 * Forwards an absolute-URI request (`GET http://host/path`) and streams the answer back: `400` for
 * a target or request node cannot send, `403` for a host the rules do not list or a name that
 * resolves to an internal address, `503` when every
 * upstream slot is taken, `502` for an upstream that fails or answers what HTTP/1.1 cannot carry
 * on (a status outside 200-599, a head too large), `504` when it cannot be reached in time. Once the
 * answer's head is sent, a failure ends the client's connection (the body is cut, never patched).
 */
export function forwardRequest(
  context: ProxyContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): void {
  const { limits } = context;
  request.on("error", () => response.destroy());
  response.on("error", () => response.destroy());
  if (request.httpVersionMajor !== 1) {
    return replyError(response, 505, `HTTP/${request.httpVersion} is not spoken here: use HTTP/1.1`);
  }
  const coding = request.headers["transfer-encoding"];
  if (coding !== undefined && !/(?:^|,)[ \t]*chunked[ \t]*$/i.test(coding)) {
    return replyError(response, 400, "a request's transfer-encoding must end with chunked");
  }
  const target = forwardTarget(request.url ?? "");
  if ("malformed" in target) return replyError(response, 400, target.malformed);
  const refusal = hostRefusal(context.rules, target.host, target.port);
  if (refusal !== undefined) return replyError(response, 403, refusal);
  const releaseSlot = context.takeUpstreamSlot();
  if (releaseSlot === undefined) {
    return replyError(response, 503, `more than ${limits.maxUpstreams} upstream connections at once`);
  }
  let upstream: http.ClientRequest;
  try {
    upstream = http.request({
      host: target.host,
      port: target.port,
      method: request.method,
      path: target.path,
      headers: upstreamRequestHeaders(request, target.authority),
      setHost: false,
      agent: false,
      lookup: guardedLookup(matchHostRule(context.rules, target.host, target.port), context.guard),
      maxHeaderSize: limits.maxHeaderBytes,
      insecureHTTPParser: false,
    });
  } catch (error) {
    releaseSlot();
    return replyError(response, 400, `the request cannot be forwarded: ${messageOf(error)}`);
  }
  upstream.maxHeadersCount = limits.maxHeadersCount;
  let connected = false;
  let answer: http.IncomingMessage | undefined;
  upstream.once("close", releaseSlot);
  upstream.on("socket", (socket: net.Socket) => {
    context.track(socket);
    socket.setTimeout(limits.connectTimeoutMilliseconds);
    socket.once("connect", () => {
      connected = true;
      socket.setTimeout(limits.idleTimeoutMilliseconds);
    });
    socket.on("timeout", () => {
      if (!connected) replyError(response, 504, `${target.authority} did not answer in time`);
      upstream.destroy(new Error(`${target.authority} sent nothing for too long`));
    });
  });
  upstream.on("error", (error) => {
    // Junk after a complete answer (bytes past its end) fails the upstream, not the answer.
    if (answer?.complete) return;
    if (isAddressRefusal(error)) return replyError(response, 403, error.message);
    replyError(response, 502, `${target.authority}: ${error.message}`);
  });
  upstream.on("close", () => {
    if (!answer) replyError(response, 502, `${target.authority} closed the connection without an answer`);
  });
  response.once("close", () => {
    if (!response.writableFinished) upstream.destroy();
  });
  upstream.on("response", (received: http.IncomingMessage) => {
    answer = received;
    const status = answer.statusCode ?? 0;
    if (status < 200 || status > 599) {
      received.destroy();
      upstream.destroy();
      return replyError(response, 502, `${target.authority} answered with status ${status}`);
    }
    try {
      response.writeHead(status, safeStatusMessage(received.statusMessage), clientResponseHeaders(received));
    } catch (error) {
      received.destroy();
      upstream.destroy();
      return replyError(response, 502, `${target.authority} sent a head node refuses: ${messageOf(error)}`);
    }
    pipeline(received, response, (error) => {
      if (error) {
        upstream.destroy();
        response.destroy();
      }
    });
  });
  pipeline(request, upstream, (error) => {
    if (error) upstream.destroy();
  });
}

/**
 * A plain-text error answer that closes the connection; when the head is already out, the
 * connection is cut instead, so the client sees an incomplete answer rather than a patched one.
 */
function replyError(response: http.ServerResponse, status: number, reason: string): void {
  if (response.writableEnded || response.destroyed) return;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = `agentd sandbox: ${reason.replace(/[^\x20-\x7e]/g, "?")}\n`;
  try {
    response.writeHead(status, refusalStatusText(status, reason), {
      "content-type": "text/plain",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    response.end(body);
  } catch {
    response.destroy();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
