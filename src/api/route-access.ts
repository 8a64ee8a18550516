import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import { type RouteAccess, rolesAllowed, roleAllows } from "../access/role.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Principal } from "./api-auth.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * What the route requires (the one place it is declared): a role (`read`, `run`, `approve`,
     * `admin`), `public` (no token) or `own` (no API token: the route checks the request itself, as
     * a webhook checks its signature). Undeclared: `read` for GET, `admin` for anything else.
     */
    role?: RouteAccess;
    /** Served without authentication: the same as `role: "public"`. */
    public?: boolean;
  }
  interface FastifyRequest {
    /** Who sent the request (set once authenticated; absent on public and `own` routes). */
    principal?: Principal;
  }
}

/** What each route of the server requires, by `METHOD /path` (the OpenAPI document shows it). */
export type RouteAccessTable = Map<string, RouteAccess>;

/**
 * Fixes each route's access as it is added: its declared `role`, `public` for `public: true` and for
 * `open(url)`, else the default of its method. Call before any route is added.
 */
export function declareRouteAccess(app: FastifyInstance, open: (url: string) => boolean): RouteAccessTable {
  const table: RouteAccessTable = new Map();
  app.addHook("onRoute", (route: RouteOptions) => {
    const config = (route.config ??= {}) as { role?: RouteAccess; public?: boolean };
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    config.role ??=
      config.public === true || open(route.url)
        ? "public"
        : methods.every((method) => method === "GET" || method === "HEAD")
          ? "read"
          : "admin";
    for (const method of methods) if (method !== "HEAD") table.set(`${method} ${route.url}`, config.role);
  });
  return table;
}

/**
 * What the request's route requires (`read` for a request that matched no route). Read once per
 * request: fastify builds `request.routeOptions` anew on every access.
 */
export function routeAccessOf(request: FastifyRequest): RouteAccess {
  return (request.routeOptions.config as { role?: RouteAccess }).role ?? "read";
}

/**
 * Refuses a principal below `required` (the route's role, routeAccessOf): 403 FORBIDDEN_ROLE naming
 * the role needed. A request that matched no route needs only to be authenticated (and then gets
 * its 404).
 */
export function checkRole(request: FastifyRequest, principal: Principal, required: RouteAccess): void {
  if (roleAllows(principal.role, required)) return;
  const route = `${request.method} ${request.routeOptions.url ?? request.url.split("?")[0]}`;
  throw new AgentdError(
    "FORBIDDEN_ROLE",
    `${route} needs the ${required} role; token "${principal.actor.name}" has the ${principal.role} role`,
    {
      hint: `use a token of role ${rolesAllowed(required).join(" or ")} (agentd token create --name <name> --role ${required})`,
      details: { required, role: principal.role },
    },
  );
}

/** Whether a route requiring `required` (routeAccessOf) is served without the API token. */
export function isTokenFree(required: RouteAccess): boolean {
  return required === "public" || required === "own";
}
