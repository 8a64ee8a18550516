import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";

/** GET /metrics: Prometheus text format. */
export function registerMetricsRoutes(app: FastifyInstance, registry: Registry): void {
  app.get("/metrics", { schema: { summary: "Prometheus metrics" } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
