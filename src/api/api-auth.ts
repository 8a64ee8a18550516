import { parse as parseCookies } from "cookie";
import { AgentdError } from "../errors/agentd-error.js";
import { createBearerCheck } from "./bearer-auth.js";
import type { SessionStore } from "./session-store.js";

/** The browser session cookie `GET /auth/login` sets. */
export const SESSION_COOKIE = "agentd_session";

/** The headers authentication reads. */
export interface CredentialHeaders {
  authorization?: string | undefined;
  cookie?: string | undefined;
}

/**
 * Authentication with the API token: `Authorization: Bearer <token>` (programs), or the session
 * cookie of a browser that logged in with the token. A wrong bearer token is refused even when a
 * valid cookie comes along, so a client never learns which of the two it got right.
 */
export function createAuthentication(
  token: string,
  sessions: SessionStore,
): (headers: CredentialHeaders) => void {
  const checkBearer = createBearerCheck(token);
  return (headers) => {
    if (headers.authorization !== undefined) {
      checkBearer(headers.authorization);
      return;
    }
    const session = sessionOf(headers.cookie);
    if (session !== undefined && sessions.isValid(session)) return;
    throw new AgentdError(
      "UNAUTHORIZED",
      session === undefined ? "missing bearer token" : "the browser session has ended",
      {
        hint: "send Authorization: Bearer <token> (agentd token prints it), or open the login URL agentd token --url prints",
      },
    );
  };
}

/** The session id in a `Cookie` header, if any. */
export function sessionOf(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined) return undefined;
  const value = parseCookies(cookieHeader)[SESSION_COOKIE];
  return value === undefined || value === "" ? undefined : value;
}
