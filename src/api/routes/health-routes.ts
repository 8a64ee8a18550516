import { documented } from "../route-responses.js";
import { HealthSchema } from "../response-schemas.js";
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../route-context.js";

/** GET /health: liveness without authentication. */
export function registerHealthRoutes(
  app: FastifyInstance,
  { services, shutdownSignal, clock }: RouteContext,
): void {
  app.get(
    "/health",
    {
      config: { public: true },
      schema: {
        summary: "Liveness, version and uptime, degraded with its reasons (no token needed)",
        ...documented({
          operationId: "getHealth",
          success: { status: 200, description: "The daemon is up", schema: HealthSchema },
        }),
      },
    },
    async () => {
      const store = services.health.store?.();
      const reasons = services.storage?.healthReasons() ?? [];
      const storeStatus =
        store?.connected === false ? "store_unavailable" : reasons.length > 0 ? "degraded" : "ok";
      return {
        status: shutdownSignal.aborted ? "shutting_down" : storeStatus,
        reasons,
        version: services.health.version,
        uptime_seconds: Math.floor((clock.now() - services.health.startedAt.getTime()) / 1_000),
        ...(store ? { store } : {}),
        ...(services.health.node === undefined ? {} : { node: services.health.node }),
        ...(services.health.unsandboxedAgents === undefined
          ? {}
          : { unsandboxed_agents: services.health.unsandboxedAgents() }),
      };
    },
  );
}
