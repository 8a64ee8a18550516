import type { FastifyRequest } from "fastify";
import { AgentdError } from "../errors/agentd-error.js";
import { createHostPolicy } from "./host-policy.js";
import { createOriginPolicy } from "./origin-policy.js";

export interface RequestGuardOptions {
  bindHost: string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

/**
 * The checks that keep web pages from driving the API, run on every request before
 * authentication: the `Host` must name this daemon (DNS rebinding), a state-changing request must
 * come from this daemon's own origin or a listed one (cross-site forms and `fetch`), and every POST
 * must say `content-type: application/json`, which a page can only send after a CORS preflight
 * this server never grants. Throws the AgentdError to answer with.
 */
export function createRequestGuard(options: RequestGuardOptions): (request: FastifyRequest) => void {
  const hostAllowed = createHostPolicy({ bindHost: options.bindHost, allowedHosts: options.allowedHosts });
  const originAllowed = createOriginPolicy(options.allowedOrigins);
  return (request) => {
    const host = request.headers.host;
    if (!hostAllowed(host)) {
      throw new AgentdError(
        "HOST_NOT_ALLOWED",
        `this daemon does not answer to the host ${JSON.stringify(host ?? "")}`,
        {
          hint: "use the address the daemon listens on, localhost or 127.0.0.1; a name of your own goes into server.allowed_hosts",
        },
      );
    }
    const method = request.method;
    // A read passes the origin check whatever its origin, and the media type is a POST's rule: a
    // poll is not made to gather the facts of either.
    if (method === "GET" || method === "HEAD") return;
    const origin = request.headers.origin;
    const secFetchSite = request.headers["sec-fetch-site"];
    const facts = {
      method: request.method,
      protocol: request.protocol,
      host,
      origin,
      secFetchSite: Array.isArray(secFetchSite) ? secFetchSite[0] : secFetchSite,
    };
    if (!originAllowed(facts)) {
      throw new AgentdError(
        "ORIGIN_NOT_ALLOWED",
        `${request.method} from ${origin ?? "another site"} is refused`,
        {
          hint: "pages of other origins cannot change state; list a trusted origin in server.allowed_origins",
        },
      );
    }
    if (request.method === "POST" && !isJsonMediaType(request.headers["content-type"]) && !isBare(request)) {
      throw new AgentdError("UNSUPPORTED_MEDIA_TYPE", "a POST must have content-type: application/json", {
        hint: "send -H 'content-type: application/json', or no body and no content-type at all",
      });
    }
  };
}

/**
 * A POST with neither a body nor a content-type, as generated clients and the `/docs` explorer send
 * to routes that take no body (stop, pause, resume). A browser form always sends a content-type,
 * so this lets nothing cross-site through that the JSON rule kept out.
 */
function isBare(request: FastifyRequest): boolean {
  const headers = request.headers;
  const length = headers["content-length"];
  return (
    headers["content-type"] === undefined &&
    headers["transfer-encoding"] === undefined &&
    (length === undefined || length === "0")
  );
}

function isJsonMediaType(contentType: string | undefined): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === "application/json";
}
