import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  RouteOptions,
} from "fastify";

/** What the OpenAPI document is made of and where the explorer is served. */
export interface LazyApiDocsOptions {
  /** Where the API explorer (swagger-ui) is served, e.g. `/docs`. */
  prefix: string;
  /** @fastify/swagger's options (its `openapi` part: info, servers, security). */
  swagger: FastifyDynamicSwaggerOptions;
  /** Completes the document @fastify/swagger made, for GET /openapi.json and the explorer alike. */
  complete: (document: Record<string, unknown>) => Record<string, unknown>;
}

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;
/**
 * The docs' own instance never routes a request to a declared route: its compilers accept all,
 * so fastify loads neither ajv nor fast-json-stringify for it.
 */
const ACCEPT_ALL = {
  buildValidator: () => () => () => true,
  buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
} as unknown as CompilersFactory;

/** Headers of the docs' answer that the server answering the request sets itself. */
const HOP_HEADERS = new Set(["connection", "content-length", "keep-alive", "transfer-encoding", "date"]);

/**
 * GET /openapi.json and the API explorer under `prefix`, built at their first request instead of at
 * every start: @fastify/swagger and @fastify/swagger-ui (with @fastify/static and the copy of yaml
 * they require) were about a tenth of a daemon's start, and most daemons never serve them.
 *
 * The routes the server declares are kept as they are added (as @fastify/swagger's own onRoute
 * hook keeps them: call this before any documented route). At the first request to the docs, a
 * fastify instance of their own, never listening, registers @fastify/swagger, the same routes
 * (their method, URL, schema and config: what the document is made of) and @fastify/swagger-ui;
 * the docs' requests are answered by it (`inject`), after the server's own hooks (host and origin
 * checks, authentication) ran on them as on any request.
 */
export function registerLazyApiDocs(app: FastifyInstance, options: LazyApiDocsOptions): void {
  const declared: RouteOptions[] = [];
  app.addHook("onRoute", (route) => {
    // HEAD routes are fastify's copies of GET ones (@fastify/swagger leaves them out); hidden
    // routes are not documented, and the docs' own routes are the docs' instance's.
    const schema = route.schema as { hide?: boolean } | undefined;
    if (route.method === "HEAD" || schema?.hide === true) return;
    declared.push(route);
  });

  let built: Promise<FastifyInstance> | undefined;
  const docs = (): Promise<FastifyInstance> =>
    (built ??= buildDocs(declared, options).catch((error: unknown) => {
      built = undefined;
      throw error;
    }));
  app.addHook("onClose", async () => {
    await (await built?.catch(() => undefined))?.close();
  });

  app.get("/openapi.json", { schema: { hide: true } }, async () =>
    options.complete((await docs()).swagger() as unknown as Record<string, unknown>),
  );
  const forward = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // A HEAD is asked as the GET it is the head of: fastify's HEAD route sends the head of the answer.
    const answer = await (await docs()).inject({ method: "GET", url: request.url, headers: request.headers });
    // A file the explorer does not have is any other unknown route.
    if (answer.statusCode === 404) {
      reply.callNotFound();
      return reply;
    }
    reply.status(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    return answer.rawPayload.length === 0 ? reply.send() : reply.send(answer.rawPayload);
  };
  app.get(options.prefix, { schema: { hide: true } }, forward);
  app.get(`${options.prefix}/*`, { schema: { hide: true } }, forward);
}

/** The docs' instance: @fastify/swagger, the server's documented routes, @fastify/swagger-ui. */
async function buildDocs(declared: RouteOptions[], options: LazyApiDocsOptions): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
    import("fastify"),
    import("@fastify/swagger"),
    import("@fastify/swagger-ui"),
  ]);
  const docs = Fastify({ schemaController: { compilersFactory: ACCEPT_ALL } });
  await docs.register(swagger, options.swagger);
  // Only the docs are asked of it, but a URL with dot segments (/docs/../agents) is resolved by
  // inject: such a request is any other unknown route.
  const notServed = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(404).send();
  for (const route of declared) {
    docs.route({
      method: route.method,
      url: route.url,
      ...(route.schema === undefined ? {} : { schema: route.schema }),
      ...(route.config === undefined ? {} : { config: route.config }),
      exposeHeadRoute: false,
      handler: notServed,
    });
  }
  // An API explorer from the swagger-ui files of the installed package (no CDN).
  await docs.register(swaggerUi, {
    routePrefix: options.prefix,
    transformSpecification: (document) => options.complete(document as Record<string, unknown>),
    transformSpecificationClone: true,
  });
  await docs.ready();
  return docs;
}
