import type { FastifyInstance } from "fastify";
import { traceLink } from "../../telemetry/trace-link.js";
import type { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import type { RunRecord } from "../../run-vocabulary/run-record.js";
import { RunEventsQuerySchema, RunListQuerySchema, RunParamsSchema } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { actorOf, recordAction } from "../record-action.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { RunEventsSchema, RunListSchema, RunRecordSchema } from "../response-schemas.js";

type RunParams = { Params: z.output<typeof RunParamsSchema> };

const LIFECYCLE_ACTIONS = ["pause", "resume", "stop"] as const;

/** What each lifecycle route answers: `stop` of a run in flight answers before the run has ended. */
const LIFECYCLE_ANSWERS: Record<(typeof LIFECYCLE_ACTIONS)[number], string> = {
  pause: "The run after the change, once on disk",
  resume: "The run after the change, once on disk",
  stop:
    "A queued run: the run after the change (stopped). A run in flight: the run as it was when the " +
    "stop was asked (its status unchanged); it ends when its worker returns, told by a `status` event",
};

/** GET /runs, GET /runs/:run, POST /runs/:run/pause|resume|stop, GET /runs/:run/events. */
export function registerRunRoutes(app: FastifyInstance, { services }: RouteContext): void {
  const requireRun = async (runId: string): Promise<RunRecord> => {
    const record = services.runs.get(runId) ?? (await services.runs.find(runId));
    if (!record) {
      throw new AgentdError("NOT_FOUND", `no run "${runId}"`, { field: "run", hint: "GET /runs lists runs" });
    }
    return record;
  };

  app.get<{ Querystring: z.output<typeof RunListQuerySchema> }>(
    "/runs",
    {
      schema: {
        summary: "Runs, newest first, by agent, status and parent run",
        querystring: routeSchema(RunListQuerySchema),
        ...documented({
          operationId: "listRuns",
          success: { status: 200, description: "Runs, newest first", schema: RunListSchema },
          errors: [400, 404],
        }),
      },
    },
    async (request) => ({ runs: await services.runs.list(request.query) }),
  );

  app.get<RunParams>(
    "/runs/:run",
    {
      schema: {
        summary: "One run: status, reason, usage, cost, result",
        params: routeSchema(RunParamsSchema),
        ...documented({
          operationId: "getRun",
          success: { status: 200, description: "The run", schema: RunRecordSchema },
          errors: [400, 404],
        }),
      },
    },
    async (request) => {
      const record = await requireRun(request.params.run);
      const link = traceLink(services.traceUrl, record.trace_id);
      return link === undefined ? record : { ...record, trace_url: link };
    },
  );

  for (const action of LIFECYCLE_ACTIONS) {
    app.post<RunParams>(
      `/runs/:run/${action}`,
      {
        config: { role: "run" },
        schema: {
          summary: `${action} the run`,
          params: routeSchema(RunParamsSchema),
          ...documented({
            operationId: `${action}Run`,
            success: { status: 200, description: LIFECYCLE_ANSWERS[action], schema: RunRecordSchema },
            errors: [400, 404, 409, 415, 507],
          }),
        },
      },
      async (request) => {
        const record = await services.runs[action](request.params.run, { actor: actorOf(request) });
        await recordAction(services, request, {
          action: `run.${action}`,
          agent: record.agent,
          run: record.id,
        });
        return record;
      },
    );
  }

  app.get<RunParams & { Querystring: z.output<typeof RunEventsQuerySchema> }>(
    "/runs/:run/events",
    {
      schema: {
        summary: "A page of a run's persisted log: `limit` events after `after` (pass `next` on)",
        params: routeSchema(RunParamsSchema),
        querystring: routeSchema(RunEventsQuerySchema),
        ...documented({
          operationId: "listRunEvents",
          success: { status: 200, description: "The run's events after `after`", schema: RunEventsSchema },
          errors: [400, 404],
        }),
      },
    },
    async (request) => {
      const record = await requireRun(request.params.run);
      const { after, limit } = request.query;
      const events = await services.events.runEvents(record.id, after, record.agent, limit);
      return { events, next: events.at(-1)?.id ?? after };
    },
  );
}
