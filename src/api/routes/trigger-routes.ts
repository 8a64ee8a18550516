import type { FastifyInstance } from "fastify";
import { TriggerListSchema } from "../response-schemas.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";

/**
 * `GET /triggers` (role read): every trigger of the agents served — webhook, after, watch — with
 * its health on the node answering: counts by outcome since it started, the last outcome, the last
 * run started and the last error. Names a webhook's secret only by its vault reference.
 */
export function registerTriggerRoutes(app: FastifyInstance, { services }: RouteContext): void {
  app.get(
    "/triggers",
    {
      config: { role: "read" },
      schema: {
        summary: "Every trigger of the agents served, with its health on this node",
        tags: ["triggers"],
        ...documented({
          operationId: "listTriggers",
          success: {
            status: 200,
            description: "The triggers, in the agents' order",
            schema: TriggerListSchema,
          },
        }),
      },
    },
    async () => ({
      triggers: services.triggers?.list() ?? [],
      node: services.health.node ?? null,
    }),
  );
}
