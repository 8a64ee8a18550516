import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { opaqueCursor, pageOf } from "../list-page.js";
import { ApprovalParamsSchema, DecisionBodySchema, PendingListQuerySchema } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { actorOf, recordAction } from "../record-action.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { ApprovalListSchema, DecisionSchema } from "../response-schemas.js";

/** GET /approvals, POST /approvals/:id. */
export function registerApprovalRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof PendingListQuerySchema> }>(
    "/approvals",
    {
      schema: {
        summary: "Tool calls waiting for an answer, oldest first, a page at a time",
        querystring: routeSchema(PendingListQuerySchema),
        ...documented({
          operationId: "listApprovals",
          success: { status: 200, description: "Pending approvals", schema: ApprovalListSchema },
          errors: [400],
        }),
      },
    },
    async (request) => {
      const { after, limit } = request.query;
      const page = pageOf(
        services.approvals.list(),
        { keyOf: (approval) => `${approval.requested_at ?? ""} ${approval.id}`, ...opaqueCursor },
        after,
        limit,
      );
      return { approvals: page.items, next: page.next };
    },
  );

  app.post<{ Params: z.output<typeof ApprovalParamsSchema>; Body: z.output<typeof DecisionBodySchema> }>(
    "/approvals/:id",
    {
      config: { role: "approve" },
      schema: {
        summary: "Approve or deny a pending tool call (scope run: for the rest of the run)",
        params: routeSchema(ApprovalParamsSchema),
        body: routeSchema(DecisionBodySchema),
        ...documented({
          operationId: "decideApproval",
          success: { status: 200, description: "The decision, applied", schema: DecisionSchema },
          errors: [400, 404, 415, 504, 507],
        }),
      },
    },
    async (request) => {
      const { decision, scope = "once" } = request.body;
      const { id } = request.params;
      // Known before the decision takes it off the pending list: the audit entry names its run.
      const pending = services.approvals.list().find((approval) => approval.id === id);
      await services.approvals.decide(id, decision, { scope, actor: actorOf(request) });
      await recordAction(services, request, {
        action: decision === "approve" ? "approval.approve" : "approval.deny",
        target: id,
        ...(pending
          ? { agent: pending.agent, run: pending.run, details: { tool: pending.tool, scope } }
          : {}),
      });
      return { approval: request.params.id, decision, scope };
    },
  );
}
