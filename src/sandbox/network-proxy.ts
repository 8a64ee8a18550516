import http from "node:http";
import type net from "node:net";
import type { Duplex } from "node:stream";
import type { HostRule } from "../config/host-rules.js";
import { openTunnel } from "./proxy-connect-tunnel.js";
import { ProxyContext, type ProxyOptions } from "./proxy-context.js";
import { forwardRequest } from "./proxy-forward-request.js";
import { DEFAULT_PROXY_LIMITS, type ProxyLimits } from "./proxy-limits.js";
import { endAfterWrites, endWithRawReply } from "./proxy-raw-reply.js";

export { guardedLookup, hostRefusal, isAddressRefusal } from "./proxy-host-check.js";

/** A running proxy: close it when the child is gone. */
export interface NetworkProxy {
  close(): Promise<void>;
}

/**
 * An HTTP proxy (absolute-URI requests and CONNECT tunnels) listening on a unix socket that is
 * bound into one sandbox, whose network namespace has no other way out. Every request's host and
 * port are checked against `rules`, and each name's addresses are (no internal address unless
 * `options.privateAddresses`, no loopback unless a rule names it); a refusal is a 403 whose body
 * says why.
 *
 * It runs in the daemon's process and its client may be hostile, so nothing a client or an
 * upstream sends may throw out of it or hold it: each connection's failure ends that connection
 * (with a 4xx/5xx where one can still be sent), and `limits` (default {@link DEFAULT_PROXY_LIMITS};
 * tests shorten them) bound its sockets, heads and idle time.
 */
export async function startNetworkProxy(
  socketPath: string,
  rules: readonly HostRule[],
  limits: Partial<ProxyLimits> = {},
  options: ProxyOptions = {},
): Promise<NetworkProxy> {
  const proxy = unstartedNetworkProxy(rules, limits, options);
  await new Promise<void>((resolve, reject) => {
    proxy.server.once("error", reject);
    proxy.server.listen(socketPath, () => {
      proxy.server.off("error", reject);
      resolve();
    });
  });
  return proxy;
}

/** A proxy that accepts nothing yet: its server listens where its caller says. */
export interface UnstartedNetworkProxy extends NetworkProxy {
  /** The proxy's server; an error after it listens (accept failing) is ignored. */
  server: http.Server;
}

/**
 * The proxy {@link startNetworkProxy} starts, not yet listening: for a listener the daemon receives
 * (the one a sandbox's handoff makes in its own network namespace), which the server accepts from
 * directly, with no unix socket and no relay in between.
 */
export function unstartedNetworkProxy(
  rules: readonly HostRule[],
  limits: Partial<ProxyLimits> = {},
  options: ProxyOptions = {},
): UnstartedNetworkProxy {
  const context = new ProxyContext(rules, { ...DEFAULT_PROXY_LIMITS, ...limits }, options);
  const server = createProxyServer(context);
  // Once listening, an error (accept failing for lack of descriptors) is no reason to stop.
  server.on("error", () => undefined);
  let closed: Promise<void> | undefined;
  return {
    server,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        // Called back at once, with an error, when the server never listened.
        server.close(() => resolve());
        context.destroyAll();
        server.closeAllConnections();
      })),
  };
}

function createProxyServer(context: ProxyContext): http.Server {
  const { limits } = context;
  const server = http.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMilliseconds,
    requestTimeout: limits.requestTimeoutMilliseconds,
    keepAliveTimeout: limits.keepAliveTimeoutMilliseconds,
    connectionsCheckingInterval: limits.timeoutCheckMilliseconds,
    insecureHTTPParser: false,
  });
  // A client that half-closes after its request (`printf … | nc`) still gets the answer; node's
  // default aborts the request instead. The timeouts bound how long a half-open socket stays.
  // (node's own switch for this, a property its http server has always had but does not type.)
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.maxHeadersCount = limits.maxHeadersCount;
  server.maxConnections = limits.maxConnections;
  server.setTimeout(limits.idleTimeoutMilliseconds);
  // Per socket, the responses under way and the last request: a parse error must not write a 400
  // into the middle of a response (see the clientError handler).
  const answering = new WeakMap<Duplex, number>();
  const lastExchange = new WeakMap<Duplex, [http.IncomingMessage, http.ServerResponse]>();
  const afterAnswers = new WeakMap<Duplex, () => void>();
  server.on("connection", (socket: net.Socket) => {
    context.track(socket);
    socket.on("error", () => socket.destroy());
  });
  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    lastExchange.set(socket, [request, response]);
    response.once("close", () => {
      const left = (answering.get(socket) ?? 1) - 1;
      answering.set(socket, left);
      if (left === 0) afterAnswers.get(socket)?.();
    });
    try {
      forwardRequest(context, request, response);
    } catch {
      socket.destroy();
    }
  });
  server.on("connect", (request: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    try {
      openTunnel(context, request, socket, head);
    } catch {
      socket.destroy();
    }
  });
  // An idle client socket is closed, unless an answer is still coming from its upstream: the
  // upstream's own idle timeout governs that wait (and cuts the client when it fires). An answer
  // fully handed over that the client does not read is no reason to wait.
  server.on("timeout", (socket: Duplex) => {
    const response = lastExchange.get(socket)?.[1];
    const waiting = (answering.get(socket) ?? 0) > 0 && response !== undefined && !response.writableEnded;
    if (!waiting) socket.destroy();
  });
  // A request node cannot parse (or that timed out) gets its 400/408/431 and the connection ends.
  // When it follows pipelined requests still being answered, the reply waits for their answers;
  // when the request being answered is itself broken (its body), the connection is cut at once.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const [status, reason] = clientErrorReply(error.code);
    if (error.code === "ECONNRESET") return socket.destroy();
    if ((answering.get(socket) ?? 0) === 0) return endWithRawReply(socket, status, reason);
    const [request, response] = lastExchange.get(socket) ?? [];
    if (request?.complete !== true) {
      // The request under way is itself broken: its answer, if already written (a refusal that
      // did not wait for the body), goes out; nothing more does.
      if (response?.writableEnded === true) return endAfterWrites(socket);
      return socket.destroy();
    }
    socket.pause();
    afterAnswers.set(socket, () => endWithRawReply(socket, status, reason));
  });
  return server;
}

/** The status and reason for a request node's parser refused or timed out. */
function clientErrorReply(code: string | undefined): [number, string] {
  if (code === "HPE_HEADER_OVERFLOW") return [431, "the request's head is too large"];
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return [408, "the request took too long to arrive"];
  return [400, `malformed request (${code ?? "unknown error"})`];
}
