import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { errorResponses } from "../route-responses.js";

/** GET /metrics: Prometheus text format (`text/plain; version=0.0.4; charset=utf-8`). */
export function registerMetricsRoutes(app: FastifyInstance, registry: Registry): void {
  app.get(
    "/metrics",
    {
      schema: {
        summary: "Prometheus metrics",
        operationId: "getMetrics",
        response: {
          200: {
            description: "Metrics in the Prometheus text exposition format 0.0.4, UTF-8",
            content: { "text/plain; version=0.0.4": { schema: { type: "string" } } },
          },
          ...errorResponses([]),
        },
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}
