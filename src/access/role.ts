/**
 * The roles a token can have, from the least power to the most: `read` sees everything but the
 * audit trail; `run` also starts, stops, pauses and resumes runs; `approve` also answers approvals
 * and questions; `admin` may do everything (tokens, the audit trail, secrets).
 */
export const ROLES = ["read", "run", "approve", "admin"] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a route requires: a role, `public` (no token: liveness, the login, the dashboard's files), or
 * `own` (no API token: the route authenticates the request itself, e.g. a webhook's signature).
 */
export type RouteAccess = Role | "public" | "own";

/** Whether a caller of `role` may use a route that requires `required`. */
export function roleAllows(role: Role, required: RouteAccess): boolean {
  if (required === "public" || required === "own") return true;
  if (role === "admin" || required === "read") return true;
  return role === required;
}

/** The roles that may use a route requiring `required` (for messages and the OpenAPI document). */
export function rolesAllowed(required: RouteAccess): Role[] {
  return ROLES.filter((role) => roleAllows(role, required));
}
