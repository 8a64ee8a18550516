import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import { MemoryScopeNameSchema } from "../../memory/memory-settings.js";
import type { MemoryOperators, MemoryView } from "../../memory/memory-operators.js";
import type { ApiServices } from "../api-services.js";
import { actorOf, recordAction } from "../record-action.js";
import { AgentParamsSchema, limitUpTo } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";
import { MemoryHistorySchema } from "../response-schemas.js";
import { routeSchema } from "../zod-route-schema.js";

const ScopeParamsSchema = z.object({ scope: MemoryScopeNameSchema });

/** A PUT's body: the whole new text, and the version it was made from (from a GET). */
const MemoryPutBodySchema = z.strictObject({
  content: z.string().describe("The memory's whole new Markdown text"),
  version: z.string().min(1).describe("The version the edit was made from; another version now → 409"),
});

export const MemorySchema = z.looseObject({
  memory: z.string().describe("agent:<id> or shared:<scope>"),
  content: z.string().describe("The whole memory, vault values masked"),
  version: z.string(),
  chars: z.number().int(),
  agents: z.array(z.looseObject({ id: z.string(), mode: z.enum(["none", "read", "write"]) })),
});

/** An operator's PUT in the audit trail: which memory, its new version and size (never its text). */
async function auditChange(
  services: ApiServices,
  request: FastifyRequest,
  view: MemoryView,
  agent: string | undefined,
): Promise<void> {
  await recordAction(services, request, {
    action: "memory.change",
    ...(agent === undefined ? {} : { agent }),
    target: view.memory,
    details: { version: view.version, chars: view.chars },
  });
}

const HistoryQuerySchema = z.object({
  limit: limitUpTo(1_000, 100),
});

function operatorsOf(memories: MemoryOperators | undefined): MemoryOperators {
  if (!memories) throw new AgentdError("NOT_FOUND", "this server keeps no memories");
  return memories;
}

/** GET/PUT /agents/:id/memory and GET/PUT /memories/:scope: operators read and edit memories. */
export function registerMemoryRoutes(app: FastifyInstance, { services }: RouteContext): void {
  const answer = { status: 200, description: "The memory, whole", schema: MemorySchema };
  const history = {
    status: 200,
    description: "The memory's changes, newest first",
    schema: MemoryHistorySchema,
  };
  app.get<{ Params: z.output<typeof AgentParamsSchema> }>(
    "/agents/:id/memory",
    {
      schema: {
        summary: "The memory the agent uses (its own, or its scope's), whole, with its version",
        params: routeSchema(AgentParamsSchema),
        ...documented({ operationId: "getAgentMemory", success: answer, errors: [400, 404] }),
      },
    },
    async (request) => operatorsOf(services.memories).ofAgent(request.params.id),
  );
  app.put<{ Params: z.output<typeof AgentParamsSchema>; Body: z.output<typeof MemoryPutBodySchema> }>(
    "/agents/:id/memory",
    {
      schema: {
        summary:
          "Replace the agent's memory; refused with 409 when it changed since `version`, and with 400 when it would hold a vault secret's value",
        params: routeSchema(AgentParamsSchema),
        body: routeSchema(MemoryPutBodySchema),
        ...documented({
          operationId: "putAgentMemory",
          success: answer,
          errors: [400, 404, 409, 415, 507],
        }),
      },
    },
    async (request) => {
      const view = await operatorsOf(services.memories).setOfAgent(
        request.params.id,
        request.body.content,
        request.body.version,
        actorOf(request),
      );
      await auditChange(services, request, view, request.params.id);
      return view;
    },
  );
  app.get<{ Params: z.output<typeof AgentParamsSchema>; Querystring: z.output<typeof HistoryQuerySchema> }>(
    "/agents/:id/memory/history",
    {
      schema: {
        summary:
          "The changes of the memory the agent uses, newest first: when, by which run or operator, what changed",
        params: routeSchema(AgentParamsSchema),
        querystring: routeSchema(HistoryQuerySchema),
        ...documented({ operationId: "getAgentMemoryHistory", success: history, errors: [400, 404] }),
      },
    },
    async (request) => operatorsOf(services.memories).historyOfAgent(request.params.id, request.query.limit),
  );
  app.get<{ Params: z.output<typeof ScopeParamsSchema> }>(
    "/memories/:scope",
    {
      schema: {
        summary: "A shared memory (frontmatter memory.scope), whole, with its version",
        params: routeSchema(ScopeParamsSchema),
        ...documented({ operationId: "getSharedMemory", success: answer, errors: [400, 404] }),
      },
    },
    async (request) => operatorsOf(services.memories).ofScope(request.params.scope),
  );
  app.put<{ Params: z.output<typeof ScopeParamsSchema>; Body: z.output<typeof MemoryPutBodySchema> }>(
    "/memories/:scope",
    {
      schema: {
        summary: "Replace a shared memory; 409 when it changed since `version`",
        params: routeSchema(ScopeParamsSchema),
        body: routeSchema(MemoryPutBodySchema),
        ...documented({
          operationId: "putSharedMemory",
          success: answer,
          errors: [400, 404, 409, 415, 507],
        }),
      },
    },
    async (request) => {
      const view = await operatorsOf(services.memories).setOfScope(
        request.params.scope,
        request.body.content,
        request.body.version,
        actorOf(request),
      );
      await auditChange(services, request, view, undefined);
      return view;
    },
  );
  app.get<{ Params: z.output<typeof ScopeParamsSchema>; Querystring: z.output<typeof HistoryQuerySchema> }>(
    "/memories/:scope/history",
    {
      schema: {
        summary: "The changes of a shared memory, newest first",
        params: routeSchema(ScopeParamsSchema),
        querystring: routeSchema(HistoryQuerySchema),
        ...documented({ operationId: "getSharedMemoryHistory", success: history, errors: [400] }),
      },
    },
    async (request) =>
      operatorsOf(services.memories).historyOfScope(request.params.scope, request.query.limit),
  );
}
