import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";

/** GET /metrics: Prometheus text format. */
export function registerMetricsRoutes(app: FastifyInstance, registry: Registry): void {
  app.get(
    "/metrics",
    {
      schema: {
        summary: "Prometheus metrics",
        operationId: "getMetrics",
        response: {
          200: {
            description: "Metrics in the Prometheus text format",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}
