import type { ApiServices } from "../api/api-services.js";
import type { TokenIdentifier } from "../api/api-auth.js";
import type { Logger } from "../logging/logger.js";
import type { SecureCookies, TrustProxy } from "../config/proxy-settings.js";
import type { StartingServer } from "../api/starting-server.js";

/** Where and how the HTTP API listens (config `server`). */
export interface ApiServerOptions {
  host: string;
  /** 0 = an ephemeral port. */
  port: number;
  token: string | undefined;
  /** The named tokens besides `token` (the registry). */
  tokens?: TokenIdentifier | undefined;
  /** `server.allowed_hosts`. */
  allowedHosts?: readonly string[];
  /** `server.allowed_origins`. */
  allowedOrigins?: readonly string[];
  /** `server.trust_proxy`. */
  trustProxy?: TrustProxy | undefined;
  /** `server.secure_cookies`. */
  secureCookies?: SecureCookies | undefined;
  logger: Logger;
  /** The socket already listening since the start (`/health` said "starting"): the API takes it over. */
  listening?: StartingServer | undefined;
}

/** The HTTP API once listening. */
export interface RunningApiServer {
  /** `http://host:port` with the real port. */
  url: string;
  close(): Promise<void>;
}

/** Starts the HTTP API on these services. */
export type ApiServerStarter = (
  services: ApiServices,
  options: ApiServerOptions,
) => Promise<RunningApiServer>;
