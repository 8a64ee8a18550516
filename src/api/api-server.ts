import { setMaxListeners } from "node:events";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerFactory,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { type Clock, systemClock } from "../clock/clock.js";
import { loadDashboardAssets } from "../dashboard/dashboard-assets.js";
import { DASHBOARD_ROUTES, registerDashboardRoutes } from "../dashboard/dashboard-routes.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { SecureCookies, TrustProxy } from "../config/proxy-settings.js";
import { createApiMetrics } from "./api-metrics.js";
import { requestSharedLogger } from "./request-logger.js";
import type { ApiServices } from "./api-services.js";
import { ANONYMOUS, createAuthentication, singleTokenIdentifier, type TokenIdentifier } from "./api-auth.js";
import { annotateRouteAccess } from "./openapi-roles.js";
import {
  checkRole,
  declareRouteAccess,
  isTokenFree,
  routeAccessOf,
  type RouteAccessTable,
} from "./route-access.js";
import { registerAccessRoutes } from "./routes/access-routes.js";
import { createRequestGuard } from "./request-guard.js";
import { SessionStore } from "./session-store.js";
import { toErrorReply } from "./error-reply.js";
import { answerClientError } from "./client-error-reply.js";
import { parseJsonBody } from "./json-body.js";
import { completeOpenApiDocument } from "./openapi-document.js";
import { registerLazyApiDocs } from "./lazy-api-docs.js";
import type { ApiAccess, RouteContext } from "./route-context.js";
import { registerAuthRoutes } from "./routes/auth-routes.js";
import { registerAgentRoutes } from "./routes/agent-routes.js";
import { registerApprovalRoutes } from "./routes/approval-routes.js";
import { registerQuestionRoutes } from "./routes/question-routes.js";
import { registerEventRoutes } from "./routes/event-routes.js";
import { registerEventStreamRoute } from "./routes/event-stream-route.js";
import { registerHealthRoutes } from "./routes/health-routes.js";
import { registerHookRoutes } from "./routes/hook-routes.js";
import { registerMetricsRoutes } from "./routes/metrics-routes.js";
import { registerRunRoutes } from "./routes/run-routes.js";
import { registerDeliveryRoutes } from "./routes/delivery-routes.js";
import { registerTriggerRoutes } from "./routes/trigger-routes.js";
import { registerMemoryRoutes } from "./routes/memory-routes.js";
import { registerAgentSwitchRoutes } from "./routes/agent-switch-routes.js";
import { zodValidatorCompiler } from "./zod-route-schema.js";
import { listenError } from "./listen-error.js";
import { loggableUrl } from "./loggable-url.js";
import type { StartingServer } from "./starting-server.js";

export interface ApiServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /**
   * When set, every route but the public ones (GET /health, the login) needs
   * `Authorization: Bearer <token>` or a browser session made from it; unset: no authentication.
   */
  token?: string | undefined;
  /**
   * The tokens accepted when `token` is set: the daemon's registry of named tokens (its own token
   * included, as admin). Absent: `token` alone, as admin.
   */
  tokens?: TokenIdentifier | undefined;
  /** `server.allowed_hosts`: names besides the bind address, localhost and loopback addresses. */
  allowedHosts?: readonly string[];
  /** `server.allowed_origins`: other web origins that may send state-changing requests. */
  allowedOrigins?: readonly string[];
  /**
   * `server.trust_proxy`: the peers whose X-Forwarded-For, -Proto and -Host count (default false:
   * none; the socket's address and scheme are the request's, whatever the headers say).
   */
  trustProxy?: TrustProxy | undefined;
  /** `server.secure_cookies` (default auto: Secure when the request came over https). */
  secureCookies?: SecureCookies | undefined;
  logger: Logger;
  /** Sessions and uptime are reckoned on it (default: the system clock). */
  clock?: Clock | undefined;
  /** Interval of the event stream's heartbeat comments (default 15 s). */
  heartbeatMilliseconds?: number;
  /**
   * The socket the daemon listens on since its start (`/health` answering "starting"): the API
   * takes it over, with the requests it held, instead of listening anew.
   */
  listening?: StartingServer | undefined;
  /** data_dir: a damaged state file (STORE_CORRUPT) is named to clients relative to it. */
  dataDirectory?: string | undefined;
}

export interface ApiServer {
  /** `http://host:port` the server listens on. */
  url: string;
  /** Releases long polls and streams, then stops listening. */
  close(): Promise<void>;
}

/** Routes served without a token: liveness, the API's description and the dashboard's files (no data). */
const OPEN_ROUTES = new Set<string>(["/health", "/openapi.json", ...DASHBOARD_ROUTES]);
const DOCS_PREFIX = "/docs";

const CLOSE_GRACE_MILLISECONDS = 1_000;

/** `server.trust_proxy` as fastify takes it: a hop count as the function its types ask for. */
function fastifyTrustProxy(
  trust: TrustProxy,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== "number") return trust;
  return (_address, hop) => hop < trust;
}

/** Starts the HTTP API of SPEC 6 on fastify. */
export async function startApiServer(services: ApiServices, options: ApiServerOptions): Promise<ApiServer> {
  const shutdown = new AbortController();
  // Every open long poll and stream listens to it.
  setMaxListeners(0, shutdown.signal);
  const { listening } = options;
  let handler: Parameters<StartingServer["serve"]>[0] | undefined;
  const serverFactory: FastifyServerFactory | undefined = listening
    ? (routeRequest, settings) => {
        handler = routeRequest;
        // What fastify sets on a server it creates.
        listening.server.keepAliveTimeout = Number(settings["keepAliveTimeout"]);
        listening.server.requestTimeout = Number(settings["requestTimeout"]);
        return listening.server;
      }
    : undefined;
  const app: FastifyInstance = Fastify({
    ...(serverFactory ? { serverFactory } : {}),
    // A child logger per request costs more than a poll itself: requests share the module logger.
    loggerInstance: requestSharedLogger(options.logger as FastifyBaseLogger),
    // One line per request would drown the log under pollers: onResponse logs them at debug.
    logController: new LogController({ disableRequestLogging: true }),
    // Requests refused before any route (headers too large, a malformed URL) get the usual error body.
    clientErrorHandler: answerClientError,
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const { statusCode, body } = toErrorReply(error, { dataDirectory: options.dataDirectory });
      return reply.status(statusCode).send(body);
    },
    schemaController: { compilersFactory: COMPILERS },
    // Only a trusted proxy's X-Forwarded-* make request.ip and request.protocol: off by default.
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
  });
  const metrics = createApiMetrics(services);
  const clock = options.clock ?? systemClock;
  const token = options.token === "" ? undefined : options.token;
  const context: RouteContext = {
    services,
    shutdownSignal: shutdown.signal,
    heartbeatMilliseconds: options.heartbeatMilliseconds ?? 15_000,
    access: {
      token,
      sessions: new SessionStore({ clock }),
      tokens: token === undefined ? undefined : (options.tokens ?? singleTokenIdentifier(token)),
    },
    clock,
    secureCookies: options.secureCookies ?? "auto",
  };
  configure(app, services, options, context.access);
  registerHealthRoutes(app, context);
  registerAuthRoutes(app, context);
  registerAgentRoutes(app, context);
  registerRunRoutes(app, context);
  registerEventRoutes(app, context);
  registerEventStreamRoute(app, context);
  registerApprovalRoutes(app, context);
  registerQuestionRoutes(app, context);
  registerAccessRoutes(app, context);
  registerHookRoutes(app, context);
  registerDeliveryRoutes(app, context);
  registerTriggerRoutes(app, context);
  registerMemoryRoutes(app, context);
  registerAgentSwitchRoutes(app, context);
  registerMetricsRoutes(app, metrics.registry);
  registerDashboardRoutes(app, () => loadDashboardAssets());

  let url: string;
  if (listening && handler) {
    await app.ready();
    listening.serve(handler);
    url = listening.url;
  } else {
    try {
      await app.listen({ host: options.host, port: options.port });
    } catch (error) {
      await app.close();
      throw listenError(error, options.host, options.port);
    }
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : options.port;
    const host = options.host.includes(":") ? `[${options.host}]` : options.host;
    url = `http://${host}:${port}`;
  }
  return {
    url,
    async close() {
      shutdown.abort(new AgentdError("SHUTTING_DOWN", "the daemon is shutting down"));
      metrics.close();
      context.access.sessions.close();
      // Requests still in flight get a moment to finish; then every connection is cut, including
      // sockets a client left half-open, which would otherwise hold the close for seconds.
      const cutOff = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MILLISECONDS);
      try {
        await app.close();
        // Fastify closes only a server it started listening itself.
        await listening?.close();
      } finally {
        clearTimeout(cutOff);
      }
    },
  };
}

/**
 * Response schemas document the API (GET /openapi.json); answers are sent as they are, never
 * filtered down to the fields a schema lists.
 */
const serializeAsIs = () => (data: unknown) => JSON.stringify(data);

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;
/**
 * Requests are validated with zod, answers sent as they are: given as the server's compilers,
 * fastify never loads ajv and fast-json-stringify (~0.2 s of a start) to build its defaults. Its
 * types name ajv's signatures; it calls these as it calls those of setValidatorCompiler.
 */
const COMPILERS = {
  buildValidator: () => zodValidatorCompiler,
  buildSerializer: () => serializeAsIs,
} as unknown as CompilersFactory;

/** The OpenAPI document with each operation's role (x-agentd-role) and its 403. */
function withRouteAccess<Document extends object>(document: Document, table: RouteAccessTable): Document {
  annotateRouteAccess(document as Parameters<typeof annotateRouteAccess>[0], table);
  return document;
}

/**
 * Validation, errors, authentication and roles, JSON bodies and the OpenAPI document: before any
 * route.
 */
function configure(
  app: FastifyInstance,
  services: ApiServices,
  options: ApiServerOptions,
  access: ApiAccess,
): void {
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializeAsIs);
  app.setErrorHandler((error, request, reply) => {
    const { statusCode, body, internal } = toErrorReply(error, { dataDirectory: options.dataDirectory });
    // A change refused for lack of room: the whole daemon is full, not only this request.
    if (statusCode === 507) services.storage?.failed(error);
    if (internal) request.log.error({ err: error, url: loggableUrl(request.url) }, "request failed");
    // The client read the file relative to data_dir: the operator reads where it is, and why.
    else if (body.error.code === "STORE_CORRUPT")
      request.log.error({ err: error, url: loggableUrl(request.url) }, "a state file of data_dir is damaged");
    return reply.status(statusCode).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: { code: "NOT_FOUND", message: `no route ${request.method} ${request.url.split("?")[0]}` },
    }),
  );
  app.removeContentTypeParser("application/json");
  // As bytes: decoding them here refuses invalid UTF-8 rather than reading it as U+FFFD.
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const guard = createRequestGuard({
    bindHost: options.host,
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
  });
  const authenticate =
    access.tokens === undefined ? undefined : createAuthentication(access.tokens, access.sessions);
  const routeAccess = declareRouteAccess(
    app,
    (route) => OPEN_ROUTES.has(route) || route === DOCS_PREFIX || route.startsWith(`${DOCS_PREFIX}/`),
  );
  app.decorateRequest("principal", undefined);
  // A callback hook, not an async one: every request would otherwise wait a promise and a tick. A
  // throw is answered as a rejection is.
  app.addHook("onRequest", (request, _reply, done) => {
    guard(request);
    const required = routeAccessOf(request);
    if (!isTokenFree(required)) {
      const principal = authenticate === undefined ? ANONYMOUS : authenticate(request.headers);
      checkRole(request, principal, required);
      request.principal = principal;
    }
    done();
  });
  // GET /openapi.json and an API explorer at /docs, built at their first request.
  registerLazyApiDocs(app, {
    prefix: DOCS_PREFIX,
    swagger: {
      openapi: {
        info: { title: "agentd", version: "1", description: "Run AI agents defined as Markdown files." },
        // Relative: the document is served by the daemon it describes, whatever its address.
        servers: [{ url: "/", description: "this daemon" }],
        components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
        security: [{ bearer: [] }],
      },
    },
    complete: (document) =>
      withRouteAccess(
        completeOpenApiDocument(document as Parameters<typeof completeOpenApiDocument>[0]),
        routeAccess,
      ),
  });
  if (options.logger.isLevelEnabled("debug")) {
    app.addHook("onResponse", async (request, reply) => {
      request.log.debug(
        {
          method: request.method,
          url: loggableUrl(request.url),
          status: reply.statusCode,
          // The socket's peer, or what a trusted proxy says it forwarded for (server.trust_proxy).
          client: request.ip,
        },
        "request",
      );
    });
  }
}
