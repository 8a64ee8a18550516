import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { DEFAULT_TOKEN_NAME } from "../../access/api-token.js";
import { AgentdError } from "../../errors/agentd-error.js";
import {
  AuditPageSchema,
  AuditQuerySchema,
  CreatedTokenSchema,
  CreateTokenBodySchema,
  RevokedTokenSchema,
  SessionSchema,
  TokenListSchema,
  TokenParamsSchema,
} from "../access-schemas.js";
import { ANONYMOUS } from "../api-auth.js";
import type { TokensService } from "../api-services.js";
import { actorOf, recordAction } from "../record-action.js";
import type { RouteContext } from "../route-context.js";
import { documented } from "../route-responses.js";
import { routeSchema } from "../zod-route-schema.js";

/**
 * Who may do what: GET /auth/session (the caller's role), GET|POST /tokens, DELETE /tokens/:name
 * and GET /audit (admin).
 */
export function registerAccessRoutes(app: FastifyInstance, { services, access }: RouteContext): void {
  const tokens = (): TokensService => {
    if (services.tokens) return services.tokens;
    throw new AgentdError("CONFLICT", "this server has no named tokens", {
      hint: access.token === undefined ? "authentication is off (server.auth: none)" : "run agentd start",
    });
  };

  app.get(
    "/auth/session",
    {
      config: { role: "read" },
      schema: {
        summary: "The caller's role and name: what the dashboard shows and hides",
        ...documented({
          operationId: "getSession",
          success: { status: 200, description: "The caller", schema: SessionSchema },
        }),
      },
    },
    async (request) => {
      const principal = request.principal ?? ANONYMOUS;
      return { role: principal.role, actor: principal.actor, authenticated: access.token !== undefined };
    },
  );

  app.get(
    "/tokens",
    {
      config: { role: "admin" },
      schema: {
        summary: "The named tokens: name, role, when and by whom created (never the token)",
        ...documented({
          operationId: "listTokens",
          success: { status: 200, description: "The tokens", schema: TokenListSchema },
          errors: [409],
        }),
      },
    },
    async () => ({ tokens: tokens().list(), default: { name: DEFAULT_TOKEN_NAME, role: "admin" } }),
  );

  app.post<{ Body: z.output<typeof CreateTokenBodySchema> }>(
    "/tokens",
    {
      config: { role: "admin" },
      schema: {
        summary: "Create a named token of a role; the answer shows the token, once",
        body: routeSchema(CreateTokenBodySchema),
        ...documented({
          operationId: "createToken",
          success: { status: 201, description: "The token: store it now", schema: CreatedTokenSchema },
          errors: [400, 409, 415, 507],
        }),
      },
    },
    async (request, reply) => {
      const { name, role } = request.body;
      const actor = actorOf(request);
      const created = await tokens().create(name, role, `${actor.kind}:${actor.name}`);
      await recordAction(services, request, { action: "token.create", target: name, details: { role } });
      return reply.status(201).header("cache-control", "no-store").send(created);
    },
  );

  app.delete<{ Params: z.output<typeof TokenParamsSchema> }>(
    "/tokens/:name",
    {
      config: { role: "admin" },
      schema: {
        summary: "Revoke a named token: refused from now on, on every node within seconds",
        params: routeSchema(TokenParamsSchema),
        ...documented({
          operationId: "revokeToken",
          success: { status: 200, description: "Revoked", schema: RevokedTokenSchema },
          errors: [400, 404, 409, 507],
        }),
      },
    },
    async (request) => {
      const { name } = request.params;
      await tokens().revoke(name);
      await recordAction(services, request, { action: "token.revoke", target: name });
      return { revoked: name };
    },
  );

  app.get<{ Querystring: z.output<typeof AuditQuerySchema> }>(
    "/audit",
    {
      config: { role: "admin" },
      schema: {
        summary: "The audit trail, oldest first: `limit` entries after `after` (pass `next` on)",
        querystring: routeSchema(AuditQuerySchema),
        ...documented({
          operationId: "listAudit",
          success: { status: 200, description: "Who did what", schema: AuditPageSchema },
          errors: [400],
        }),
      },
    },
    async (request) => {
      const { after, limit } = request.query;
      const entries = (await services.audit?.page(after, limit)) ?? [];
      return { entries, next: entries.at(-1)?.id ?? after ?? null };
    },
  );
}
