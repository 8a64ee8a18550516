import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { ApprovalParamsSchema, DecisionBodySchema } from "../request-schemas.js";
import type { RouteContext } from "../route-context.js";
import { routeSchema } from "../zod-route-schema.js";
import { documented } from "../route-responses.js";
import { ApprovalListSchema, DecisionSchema } from "../response-schemas.js";

/** GET /approvals, POST /approvals/:id. */
export function registerApprovalRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get(
    "/approvals",
    {
      schema: {
        summary: "Tool calls waiting for an answer",
        ...documented({
          operationId: "listApprovals",
          success: { status: 200, description: "Pending approvals", schema: ApprovalListSchema },
        }),
      },
    },
    async () => ({
      approvals: services.approvals.list(),
    }),
  );

  app.post<{ Params: z.output<typeof ApprovalParamsSchema>; Body: z.output<typeof DecisionBodySchema> }>(
    "/approvals/:id",
    {
      schema: {
        summary: "Approve or deny a pending tool call (scope run: for the rest of the run)",
        params: routeSchema(ApprovalParamsSchema),
        body: routeSchema(DecisionBodySchema),
        ...documented({
          operationId: "decideApproval",
          success: { status: 200, description: "The decision, applied", schema: DecisionSchema },
          errors: [400, 404, 415],
        }),
      },
    },
    async (request) => {
      const { decision, scope = "once" } = request.body;
      await services.approvals.decide(request.params.id, decision, { scope });
      return { approval: request.params.id, decision, scope };
    },
  );
}
