import type { SecureCookies } from "../config/proxy-settings.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../clock/clock.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { ApiServices } from "./api-services.js";
import type { SessionStore } from "./session-store.js";
import type { TokenIdentifier } from "./api-auth.js";

/** The API token (undefined with `server.auth: none`), the tokens accepted and the browser sessions. */
export interface ApiAccess {
  token: string | undefined;
  sessions: SessionStore;
  /** Undefined with `server.auth: none`. */
  tokens: TokenIdentifier | undefined;
}

/** What every route file receives from the server. */
export interface RouteContext {
  services: ApiServices;
  /** Aborted when the server closes: releases long polls and ends streams. */
  shutdownSignal: AbortSignal;
  /** Interval of the stream's heartbeat comments. */
  heartbeatMilliseconds: number;
  access: ApiAccess;
  /** The daemon's clock: uptime. */
  clock: Clock;
  /** `server.secure_cookies`: when the session cookie is marked Secure. */
  secureCookies: SecureCookies;
}

/**
 * Throws NOT_FOUND unless the agent exists, or has events (an agent whose file was removed keeps
 * its history readable).
 */
export function requireAgent(services: ApiServices, id: string): void {
  if (services.events.has(id) || services.agents.get(id) !== undefined) return;
  throw new AgentdError("NOT_FOUND", `no agent "${id}"`, {
    field: "id",
    hint: "GET /agents lists every agent",
  });
}

/**
 * An AbortSignal aborted when the client goes away or the server shuts down (or `abort` is called:
 * the request's credentials lapsed), and a function that stops watching. For long polls and streams.
 */
export function clientGoneSignal(
  request: FastifyRequest,
  reply: FastifyReply,
  shutdownSignal: AbortSignal,
): { signal: AbortSignal; abort: () => void; release: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  // Plain listeners rather than AbortSignal.any, which keeps dependent signals alive on the
  // long-lived shutdown signal in some Node 20 releases.
  reply.raw.once("close", abort);
  request.raw.once("aborted", abort);
  shutdownSignal.addEventListener("abort", abort, { once: true });
  if (shutdownSignal.aborted) abort();
  return {
    signal: controller.signal,
    abort,
    release: () => {
      reply.raw.off("close", abort);
      request.raw.off("aborted", abort);
      shutdownSignal.removeEventListener("abort", abort);
    },
  };
}
