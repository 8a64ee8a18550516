import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { servedDelivery } from "../../deliveries/delivery-record.js";
import { DeliveryListQuerySchema } from "../request-schemas.js";
import { DeliveryListSchema } from "../response-schemas.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";
import { routeSchema } from "../zod-route-schema.js";

/** GET /deliveries: runs' outcomes sent (or being sent) to their targets, newest first. */
export function registerDeliveryRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof DeliveryListQuerySchema> }>(
    "/deliveries",
    {
      schema: {
        summary:
          "Deliveries of runs' outcomes with their attempts, newest first, by status, a page at a time",
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
      const all = (await services.deliveries?.list(status)) ?? [];
      const rest = all.filter(
        (record) =>
          (before === undefined || record.id < before) &&
          (agent === undefined || record.agent === agent) &&
          (run === undefined || record.run === run),
      );
      const page = rest.slice(0, limit);
      const last = page.at(-1);
      return {
        deliveries: page.map(servedDelivery),
        next: rest.length > page.length && last ? last.id : null,
      };
    },
  );
}
