import { createHash } from "node:crypto";
import { remoteParentOf, withRequestParent } from "../../telemetry/trace-scope.js";
import { gzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { pageOf } from "../list-page.js";
import {
  AgentListQuerySchema,
  AgentParamsSchema,
  StartRunBodySchema,
  StartRunHeadersSchema,
} from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { recordAction } from "../record-action.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { createWhileStorageHasRoom } from "../storage-admission.js";
import {
  AgentDetailSchema,
  AgentListSchema,
  RunDuplicateSchema,
  RunStartedSchema,
} from "../response-schemas.js";

/** GET /agents, GET /agents/:id, POST /agents/:id/runs. */
export function registerAgentRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof AgentListQuerySchema> }>(
    "/agents",
    {
      schema: {
        summary:
          "Every agent, valid or not, with schedule and last run, by id a page at a time (ETag: If-None-Match answers 304)",
        querystring: routeSchema(AgentListQuerySchema),
        ...documented({
          operationId: "listAgents",
          success: { status: 200, description: "A page of agents, by id", schema: AgentListSchema },
          bodiless: [{ status: 304, description: "Not modified: If-None-Match names the ETag of this page" }],
          errors: [400],
        }),
      },
    },
    async (request, reply) => {
      const { after, limit } = request.query;
      const page = pageOf(services.agents.list(), { keyOf: (agent) => agent.id }, after, limit);
      const body = JSON.stringify({
        agents: page.items,
        ...(services.agents.directory === undefined ? {} : { agents_dir: services.agents.directory }),
        next: page.next,
      });
      // Pollers (the dashboard, once a second) skip the transfer and the parse while nothing changed.
      const etag = `"${createHash("sha1").update(body).digest("base64url")}"`;
      reply.header("etag", etag).header("cache-control", "no-cache");
      if (request.headers["if-none-match"] === etag) return reply.status(304).send();
      reply.type("application/json; charset=utf-8").header("vary", "accept-encoding");
      // 1,000 agents are ~300 KB of JSON and ~30 KB gzipped.
      if (body.length > 8_192 && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")) {
        return reply.header("content-encoding", "gzip").send(gzipSync(body));
      }
      return reply.send(body);
    },
  );

  app.get<{ Params: z.output<typeof AgentParamsSchema> }>(
    "/agents/:id",
    {
      schema: {
        summary: "One agent with its resolved definition",
        params: routeSchema(AgentParamsSchema),
        ...documented({
          operationId: "getAgent",
          success: { status: 200, description: "The agent", schema: AgentDetailSchema },
          errors: [400, 404],
        }),
      },
    },
    async (request) => {
      const agent = services.agents.get(request.params.id);
      if (!agent) {
        throw new AgentdError("NOT_FOUND", `no agent "${request.params.id}"`, {
          field: "id",
          hint: "GET /agents lists every agent",
        });
      }
      return agent;
    },
  );

  app.post<{
    Params: z.output<typeof AgentParamsSchema>;
    Body: z.output<typeof StartRunBodySchema>;
    Headers: z.output<typeof StartRunHeadersSchema>;
  }>(
    "/agents/:id/runs",
    {
      config: { role: "run" },
      schema: {
        summary:
          "Start a run of the agent (202 with the run id); with an Idempotency-Key used within 24 h, the run it made (200)",
        params: routeSchema(AgentParamsSchema),
        body: routeSchema(StartRunBodySchema),
        headers: routeSchema(StartRunHeadersSchema),
        ...documented({
          operationId: "startRun",
          success: { status: 202, description: "The run is queued", schema: RunStartedSchema },
          alsoSuccess: [
            {
              status: 200,
              description: "The Idempotency-Key was used for this agent within 24 h: nothing new is started",
              schema: RunDuplicateSchema,
            },
          ],
          errors: [400, 404, 409, 415, 507],
        }),
      },
    },
    // An incoming `traceparent` is the parent of the run's span (telemetry/).
    async (request, reply) =>
      withRequestParent(remoteParentOf(request.headers), async () => {
        const key = request.headers["idempotency-key"];
        const { id } = request.params;
        const task = request.body?.task;
        if (key === undefined) {
          const record = await createWhileStorageHasRoom(services.storage, () =>
            services.runs.start(id, task),
          );
          await recordAction(services, request, { action: "run.start", agent: id, run: record.id });
          return reply.status(202).send({ run: record.id, status: record.status, ...traceOf(record) });
        }
        const started = await createWhileStorageHasRoom(services.storage, () =>
          services.runs.startOnce(id, task, key),
        );
        const { run } = started;
        if (started.duplicate)
          return reply
            .status(200)
            .send({ run: run.id, status: run.status, duplicate: true, ...traceOf(run) });
        await recordAction(services, request, { action: "run.start", agent: id, run: run.id });
        return reply.status(202).send({ run: run.id, status: run.status, ...traceOf(run) });
      }),
  );
}

/** The run's trace id, when traces are on: the caller can look the run up in its trace UI. */
function traceOf(record: { trace_id?: string | undefined }): { trace_id?: string } {
  return record.trace_id === undefined ? {} : { trace_id: record.trace_id };
}
