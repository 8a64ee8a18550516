import { type RouteAccess, rolesAllowed } from "../access/role.js";
import type { RouteAccessTable } from "./route-access.js";
import { errorDescription } from "./route-responses.js";

type Operation = Record<string, unknown> & { responses?: Record<string, unknown> };
type OpenApiPaths = Record<string, Record<string, Operation>>;

/** How each access reads in an operation's description. */
const ACCESS_NOTES: Record<RouteAccess, string> = {
  public: "No token needed.",
  own: "No API token: the route authenticates the request itself.",
  read: "Role: read (any token).",
  run: "Role: run (or admin).",
  approve: "Role: approve (or admin).",
  admin: "Role: admin.",
};

/** Methods a page of another origin may not send (request-guard.ts): they can answer 403 ORIGIN_NOT_ALLOWED. */
const STATE_CHANGING = new Set(["post", "put", "patch", "delete"]);
const ORIGIN_REFUSED = "ORIGIN_NOT_ALLOWED: sent by a web page of another origin (server.allowed_origins)";

/**
 * Writes each operation's access into the OpenAPI document: `x-agentd-role`, `x-agentd-roles` (the
 * roles that may call it), a 401 on every route that needs a token (and on no other: a token-free
 * route declares its own 401 if it answers one), a 403 response where a role could be refused
 * (FORBIDDEN_ROLE) or a page of another origin sent a state-changing request (ORIGIN_NOT_ALLOWED),
 * and no security requirement on routes served without the API token.
 */
export function annotateRouteAccess(document: { paths?: OpenApiPaths }, table: RouteAccessTable): void {
  for (const [key, access] of table) {
    const [method = "", url = ""] = key.split(" ");
    const openApiPath = url.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const operation = document.paths?.[openApiPath]?.[method.toLowerCase()];
    if (operation === undefined) continue;
    operation["x-agentd-role"] = access;
    operation["x-agentd-roles"] = access === "public" || access === "own" ? [] : rolesAllowed(access);
    const description = typeof operation["description"] === "string" ? operation["description"] : "";
    if (!description.includes(ACCESS_NOTES[access])) {
      operation["description"] =
        description === "" ? ACCESS_NOTES[access] : `${description}\n\n${ACCESS_NOTES[access]}`;
    }
    const tokenFree = access === "public" || access === "own";
    if (tokenFree) operation["security"] = [];
    const responses = (operation.responses ??= {});
    // Every route has the error body on its 500: the 401 and 403 added here take it.
    const internal = responses["500"];
    if (internal === undefined) continue;
    if (!tokenFree) {
      responses["401"] ??= { ...structuredClone(internal as object), description: errorDescription(401) };
    }
    const reasons = [
      ...(tokenFree || access === "read" ? [] : [`FORBIDDEN_ROLE: the token's role is below ${access}`]),
      ...(STATE_CHANGING.has(method.toLowerCase()) ? [ORIGIN_REFUSED] : []),
    ];
    if (reasons.length > 0 && responses["403"] === undefined) {
      responses["403"] = {
        ...structuredClone(internal as Record<string, unknown>),
        description: reasons.join("; or "),
      };
    }
  }
}
