import { parse as parseCookies } from "cookie";
import { ANONYMOUS_NAME, DEFAULT_TOKEN_NAME } from "../access/api-token.js";
import type { Role } from "../access/role.js";
import type { TokenIdentity } from "../access/token-registry.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Actor } from "../events/actor.js";
import { createTokenCheck } from "./bearer-auth.js";
import type { SessionStore } from "./session-store.js";

/** The browser session cookie `GET /auth/login` sets. */
export const SESSION_COOKIE = "agentd_session";

/** `User-Agent` of the `agentd` commands: their actions are recorded as the CLI's. */
export const CLI_USER_AGENT_PREFIX = "agentd-cli/";

/** The headers authentication reads. */
export interface CredentialHeaders {
  authorization?: string | undefined;
  cookie?: string | undefined;
  "user-agent"?: string | undefined;
}

/** Who a request comes from: the role it holds and the actor its actions are recorded as. */
export interface Principal {
  role: Role;
  actor: Actor;
  /** The token it authenticated with (none with `server.auth: none`). */
  identity?: TokenIdentity;
  /** The browser session it came with, when a session cookie authenticated it. */
  session?: string;
}

/** Where a request's credentials are checked again: the tokens accepted and the browser sessions. */
export interface CredentialSources {
  /** Undefined with `server.auth: none`. */
  tokens: TokenIdentifier | undefined;
  sessions: SessionStore;
}

/** The tokens the API accepts (the daemon's TokenRegistry, or its single token alone). */
export interface TokenIdentifier {
  identify(token: string): TokenIdentity | undefined;
  /**
   * Whether the very token of this identity is still valid: a browser session, an open event
   * stream or a waiting long poll lasts no longer than its token.
   */
  isActive(identity: TokenIdentity): boolean;
  /** Calls `listener` after each change of the tokens accepted; answers the function that stops it. */
  onChange(listener: () => void): () => void;
}

const SINGLE_TOKEN_IDENTITY: TokenIdentity = { name: DEFAULT_TOKEN_NAME, role: "admin", digest: "" };

/** One token, named "default", admin: a server started without named tokens (tests, `agentd run`). */
export function singleTokenIdentifier(token: string): TokenIdentifier {
  const matches = createTokenCheck(token);
  return {
    identify: (given) => (matches(given) ? SINGLE_TOKEN_IDENTITY : undefined),
    isActive: (identity) => identity === SINGLE_TOKEN_IDENTITY,
    onChange: () => () => undefined,
  };
}

/**
 * Whether the credentials a request authenticated with still count, for an answer given long after
 * the request came (a long poll) or a stream still open: its token not revoked, its browser session
 * (if it came with one) not ended. Always with `server.auth: none`.
 */
export function stillAuthenticated(principal: Principal | undefined, sources: CredentialSources): boolean {
  if (sources.tokens === undefined) return true;
  if (principal?.identity === undefined || !sources.tokens.isActive(principal.identity)) return false;
  return principal.session === undefined || sources.sessions.isValid(principal.session);
}

/** Refuses the answer to a request whose credentials ended while it waited (see stillAuthenticated). */
export function requireStillAuthenticated(
  principal: Principal | undefined,
  sources: CredentialSources,
): void {
  if (stillAuthenticated(principal, sources)) return;
  throw new AgentdError(
    "UNAUTHORIZED",
    "the token was revoked, or the session ended, while the request waited",
    {
      hint: "agentd token list shows the tokens; log in again, or ask an admin for a new token",
    },
  );
}

/** With `server.auth: none` every request is this. */
export const ANONYMOUS: Principal = { role: "admin", actor: { kind: "token", name: ANONYMOUS_NAME } };

/**
 * Authentication: `Authorization: Bearer <token>` (programs), or the session cookie of a browser
 * that logged in with a token. A wrong bearer token is refused even when a valid cookie comes
 * along, so a client never learns which of the two it got right. A revoked token, and every
 * browser session made from it, is refused from the moment the registry knows.
 */
export function createAuthentication(
  tokens: TokenIdentifier,
  sessions: SessionStore,
): (headers: CredentialHeaders) => Principal {
  return (headers) => {
    if (headers.authorization !== undefined) {
      const match = /^Bearer\s+(.+)$/i.exec(headers.authorization);
      const given = match?.[1]?.trim();
      if (given === undefined) {
        throw new AgentdError("UNAUTHORIZED", "missing bearer token", {
          hint: "send Authorization: Bearer <token> (agentd token prints it)",
        });
      }
      const identity = tokens.identify(given);
      if (identity === undefined) {
        throw new AgentdError("UNAUTHORIZED", "wrong or revoked bearer token", {
          hint: "agentd token prints the daemon's own token; agentd token list shows the named ones",
        });
      }
      const kind = headers["user-agent"]?.startsWith(CLI_USER_AGENT_PREFIX) ? "cli" : "token";
      return { role: identity.role, actor: { kind, name: identity.name }, identity };
    }
    const session = sessionOf(headers.cookie);
    const identity = session === undefined ? undefined : sessions.identify(session);
    if (session !== undefined && identity !== undefined) {
      if (tokens.isActive(identity)) {
        return { role: identity.role, actor: { kind: "dashboard", name: identity.name }, identity, session };
      }
      sessions.end(session);
    }
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
