import { serialize } from "cookie";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { AgentdError } from "../../errors/agentd-error.js";
import type { SecureCookies } from "../../config/proxy-settings.js";
import { SESSION_COOKIE, sessionOf } from "../api-auth.js";
import type { RouteContext } from "../route-context.js";
import { errorResponses } from "../route-responses.js";
import { routeSchema } from "../zod-route-schema.js";

const LoginQuerySchema = z.object({ token: z.string().optional() });

/**
 * Browser login for the dashboard. `GET /auth/login?token=<token>` (the URL the daemon prints at
 * start) answers 303 to `/` with a session cookie: HttpOnly, SameSite=Strict, Path=/, Secure over
 * https; a wrong or missing token is a 401. `POST /auth/logout` ends the session. Both pass without
 * authentication; the Host, Origin and content-type checks still apply.
 */
export function registerAuthRoutes(app: FastifyInstance, { access, secureCookies }: RouteContext): void {
  app.get<{ Querystring: z.output<typeof LoginQuerySchema> }>(
    "/auth/login",
    {
      config: { public: true },
      schema: {
        summary: "Browser login: sets the session cookie and redirects to /",
        querystring: routeSchema(LoginQuerySchema),
        security: [],
        operationId: "login",
        response: {
          303: { description: "Logged in: the session cookie is set; on to /", type: "null" },
          ...errorResponses([401]),
        },
      },
    },
    async (request, reply) => {
      // The URL carries the token: no cache or later page may keep it.
      reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer");
      if (access.tokens !== undefined) {
        const given = request.query.token;
        const identity = given === undefined ? undefined : access.tokens.identify(given);
        if (identity === undefined) {
          throw new AgentdError("UNAUTHORIZED", "wrong, revoked or missing login token", {
            hint: "open the login URL the daemon printed at start, or agentd token --url",
          });
        }
        // The session keeps the token's name and role, never the token.
        reply.header("set-cookie", sessionCookie(request, secureCookies, access.sessions.create(identity)));
      }
      return reply.redirect("/", 303);
    },
  );

  app.post(
    "/auth/logout",
    {
      config: { public: true },
      schema: {
        summary: "Ends the browser session",
        security: [],
        operationId: "logout",
        response: {
          204: { description: "Logged out: the cookie is cleared", type: "null" },
          ...errorResponses([]),
        },
      },
    },
    async (request, reply) => {
      const session = sessionOf(request.headers.cookie);
      if (session !== undefined) access.sessions.end(session);
      return reply
        .header("set-cookie", sessionCookie(request, secureCookies, "", 0))
        .status(204)
        .send();
    },
  );
}

/**
 * The session cookie. Secure per `server.secure_cookies`: `auto` marks it so when the request came
 * over https, which behind a TLS proxy is what the proxy's X-Forwarded-Proto says once the proxy is
 * trusted (`server.trust_proxy`); a client's own X-Forwarded-Proto counts for nothing.
 */
function sessionCookie(request: FastifyRequest, mode: SecureCookies, value: string, maxAge?: number): string {
  return serialize(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: mode === "always" || (mode === "auto" && request.protocol === "https"),
    ...(maxAge === undefined ? {} : { maxAge }),
  });
}
