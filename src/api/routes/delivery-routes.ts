import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { servedDelivery } from "../../deliveries/delivery-record.js";
import { DeliveryListQuerySchema } from "../request-schemas.js";
import { DeliveryListSchema, DeliveryTargetListSchema } from "../response-schemas.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";
import { routeSchema } from "../zod-route-schema.js";

/**
 * `GET /deliveries`: runs' outcomes sent (or being sent) to their targets, newest first — on a
 * cluster every node's, from the store, so each node answers the same list. `GET
 * /deliveries/targets`: every configured target with its health, never a credential.
 */
export function registerDeliveryRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof DeliveryListQuerySchema> }>(
    "/deliveries",
    {
      config: { role: "read" },
      schema: {
        summary:
          "Deliveries of runs' outcomes with their attempts, newest first, by status, a page at a time",
        tags: ["deliveries"],
        querystring: routeSchema(DeliveryListQuerySchema),
        ...documented({
          operationId: "listDeliveries",
          success: { status: 200, description: "Deliveries, newest first", schema: DeliveryListSchema },
          errors: [400],
        }),
      },
    },
    async (request) => {
      const { status, before, limit, agent, run } = request.query;
      if (services.deliveries === undefined) return { deliveries: [], next: null };
      const page = await services.deliveries.page({ status, before, limit, agent, run });
      return { deliveries: page.deliveries.map(servedDelivery), next: page.next };
    },
  );
  app.get(
    "/deliveries/targets",
    {
      config: { role: "read" },
      schema: {
        summary: "Every configured delivery target with its health, credentials left out",
        tags: ["deliveries"],
        ...documented({
          operationId: "listDeliveryTargets",
          success: {
            status: 200,
            description: "The agents' targets in the agents' order, then config targets no agent names",
            schema: DeliveryTargetListSchema,
          },
        }),
      },
    },
    async () => ({ targets: (await services.deliveries?.targets()) ?? [] }),
  );
}
