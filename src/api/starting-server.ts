import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { answerClientError } from "./client-error-reply.js";
import { createHostPolicy } from "./host-policy.js";
import { listenError } from "./listen-error.js";

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface StartingServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** `server.allowed_hosts`: `/health` answers the same `Host` headers as the API. */
  allowedHosts: readonly string[];
  version: string;
  startedAt: Date;
}

/** The daemon's listening socket before its API is assembled. */
export interface StartingServer {
  readonly server: Server;
  /** `http://host:port` with the real port. */
  readonly url: string;
  /** From now on every request goes to `handler` (the API), the ones held so far first. */
  serve(handler: RequestHandler): void;
  /** Stops listening; requests still held get 503. Resolves once every connection has ended. */
  close(): Promise<void>;
}

/**
 * Listens before the daemon reads its agents, so `GET /health` answers at once while a large
 * folder is read: `{ status: "starting", version, uptime_seconds }`, 200, for a `Host` the API
 * would answer too. Every other request is held, unanswered, until the API takes over (`serve`),
 * and is then answered as usual: nothing is refused or half-served while the start goes on. A
 * request Node's parser refuses is answered with the usual `{ error: { code, message } }` body.
 */
export async function listenWhileStarting(options: StartingServerOptions): Promise<StartingServer> {
  const hostAllowed = createHostPolicy({ bindHost: options.host, allowedHosts: options.allowedHosts });
  const held: Array<[IncomingMessage, ServerResponse]> = [];
  let handler: RequestHandler | undefined;
  const server = createServer((request, response) => {
    if (handler) return handler(request, response);
    const path = request.url?.split("?")[0];
    if (request.method === "GET" && path === "/health" && hostAllowed(request.headers.host)) {
      response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      response.end(JSON.stringify(startingHealth(options)));
      return;
    }
    held.push([request, response]);
  });
  // What Node's parser refuses (headers too large, not HTTP) gets the API's usual error body, as
  // it will once the API (fastify's clientErrorHandler) takes over.
  server.on("clientError", answerClientError);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: options.host, port: options.port }, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    throw listenError(error, options.host, options.port);
  }
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    serve(next) {
      server.off("clientError", answerClientError);
      handler = next;
      for (const [request, response] of held.splice(0)) next(request, response);
    },
    async close() {
      for (const [, response] of held.splice(0)) {
        response.writeHead(503, { "content-type": "application/json; charset=utf-8", connection: "close" });
        response.end(
          JSON.stringify({ error: { code: "SHUTTING_DOWN", message: "the daemon stopped while starting" } }),
        );
      }
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    },
  };
}

function startingHealth(options: StartingServerOptions) {
  return {
    status: "starting",
    version: options.version,
    uptime_seconds: Math.floor((Date.now() - options.startedAt.getTime()) / 1_000),
  };
}
