import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DashboardAsset, DashboardAssets } from "./dashboard-assets.js";

/** URL patterns of the page's files: served without a token (they hold no data; the API does). */
export const DASHBOARD_ROUTES = ["/", "/ui/*"] as const;

/**
 * GET / (the page) and GET /ui/* (its scripts, styles and preact), from memory, gzipped when the
 * browser accepts it, revalidated by ETag. Not part of the API: hidden from the OpenAPI document.
 */
export function registerDashboardRoutes(app: FastifyInstance, load: () => Promise<DashboardAssets>): void {
  // Read on the first request, not at start-up: a daemon nobody browses never pays for it.
  let loaded: Promise<DashboardAssets> | undefined;
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    loaded ??= load();
    const assets = await loaded;
    const asset = assets.files.get(request.url.split("?")[0] ?? "");
    if (asset === undefined) {
      return reply.status(404).send({
        error: {
          code: "NOT_FOUND",
          message:
            request.url === "/"
              ? "the dashboard is not built: run npm run build"
              : `no dashboard file ${request.url.split("?")[0]}`,
        },
      });
    }
    return send(request, reply, asset, assets.contentSecurityPolicy);
  };
  for (const url of DASHBOARD_ROUTES) app.get(url, { schema: { hide: true } }, serve);
}

function send(request: FastifyRequest, reply: FastifyReply, asset: DashboardAsset, policy: string) {
  reply
    .header("content-type", asset.contentType)
    .header("etag", asset.etag)
    .header("cache-control", "no-cache")
    .header("vary", "accept-encoding")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer");
  if (asset.contentType.startsWith("text/html")) {
    reply.header("content-security-policy", policy).header("x-frame-options", "DENY");
  }
  if (request.headers["if-none-match"] === asset.etag) return reply.status(304).send();
  if (/\bgzip\b/.test(request.headers["accept-encoding"] ?? "")) {
    return reply.header("content-encoding", "gzip").send(asset.gzipped);
  }
  return reply.send(asset.body);
}
