import { CLI_USER_AGENT_PREFIX } from "../api/api-auth.js";
import type { Command } from "commander";
import { z } from "zod";
import { readApiTokenFile } from "../api/api-token-file.js";
import type { Config } from "../config/config-schema.js";
import { loadConfig } from "../config/load-config.js";
import { AgentdError } from "../errors/agentd-error.js";
import { ERROR_CODES, type ErrorCode } from "../errors/error-codes.js";
import { DataDirectoryLock } from "../locks/data-directory-lock.js";
import type { GlobalOptions } from "./output.js";
import { wantsColor } from "./terminal/terminal-style.js";

/**
 * A daemon's URL as a client on this machine reaches it: a wildcard address it listens on
 * (`0.0.0.0`, `::`) becomes `127.0.0.1`, a host the daemon answers to (its Host check refuses
 * `0.0.0.0`). Any other URL is returned as it is.
 */
export function localDaemonUrl(daemonUrl: string): string {
  const url = new URL(daemonUrl);
  if (url.hostname !== "0.0.0.0" && url.hostname !== "[::]") return daemonUrl;
  url.hostname = "127.0.0.1";
  return url.toString().replace(/\/$/, "");
}

/** Where the client commands write and what they read: the process by default, arrays in tests. */
export interface ClientCommandIo {
  out(line: string): void;
  err(line: string): void;
  environment: NodeJS.ProcessEnv;
  /** Colours on printed events (stdout is a terminal and NO_COLOR is unset). */
  color?: boolean;
  /** Ends `--follow` loops; without it they end on SIGINT. */
  stop?: AbortSignal;
}

export const processIo: ClientCommandIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  environment: process.env,
  color: wantsColor(process.stdout),
};

/** An event as the API serves it; `data` is checked per type where it is printed. */
export const ServedEventSchema = z.object({
  id: z.number().int(),
  agent: z.string(),
  run: z.string().nullable(),
  type: z.string(),
  time: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type ServedEvent = z.infer<typeof ServedEventSchema>;

/** `GET /agents/:id/events` and `GET /runs/:run/events`: a page of events and the cursor. */
export const PollResponseSchema = z.object({
  events: z.array(ServedEventSchema),
  next: z.number().int(),
  oldest: z.number().int().nullable(),
  missed: z.number().int(),
});

const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() }),
});

export interface DaemonClientOptions {
  /** `http://127.0.0.1:7070` */
  baseUrl: string;
  token?: string | undefined;
}

/** Talks to a running daemon's HTTP API; every answer is checked against a schema. */
export class DaemonClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;

  constructor(options: DaemonClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
  }

  /**
   * The daemon of the config file: `AGENTD_URL`, else the address the daemon holding the config's
   * `data_dir` wrote in its lock (the port it really listens on: `server.port: 0` picks one), else
   * `server.host`/`server.port` (a wildcard host means this machine); the token from `AGENTD_TOKEN`, else `server.token`, else the token file
   * the daemon generated in `data_dir`.
   */
  static fromConfig(configFile: string | undefined, environment: NodeJS.ProcessEnv): DaemonClient {
    const { config } = loadConfig({ file: configFile, environment });
    const token = clientToken(config, environment);
    const url = environment.AGENTD_URL;
    if (url !== undefined && url !== "") return new DaemonClient({ baseUrl: url, token });
    const listening = DataDirectoryLock.holderOf(config.data_dir)?.url;
    if (listening !== undefined) return new DaemonClient({ baseUrl: localDaemonUrl(listening), token });
    const host = ["0.0.0.0", "::", ""].includes(config.server.host) ? "127.0.0.1" : config.server.host;
    const hostPart = host.includes(":") ? `[${host}]` : host;
    return new DaemonClient({ baseUrl: `http://${hostPart}:${config.server.port}`, token });
  }

  get<T>(path: string, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    return this.#send("GET", path, schema, undefined, signal);
  }

  /** `headers` go with the request besides the token and the content type (an `Idempotency-Key`). */
  post<T>(path: string, body: unknown, schema: z.ZodType<T>, headers?: Record<string, string>): Promise<T> {
    return this.#send("POST", path, schema, body, undefined, headers);
  }

  delete<T>(path: string, schema: z.ZodType<T>): Promise<T> {
    return this.#send("DELETE", path, schema, undefined);
  }

  put<T>(path: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
    return this.#send("PUT", path, schema, body);
  }

  async #send<T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    body: unknown,
    signal?: AbortSignal,
    extraHeaders: Record<string, string> = {},
  ): Promise<T> {
    const headers: Record<string, string> = {
      ...extraHeaders,
      accept: "application/json",
      // The daemon records what this command does as the CLI's, under the token's name.
      "user-agent": `${CLI_USER_AGENT_PREFIX}1`,
    };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    // Every body is JSON, and the daemon refuses a POST or PUT body sent as anything else.
    if (body !== undefined || method === "POST") headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new AgentdError(
        "DAEMON_UNREACHABLE",
        `no agentd daemon at ${this.baseUrl} — start one with agentd start`,
        {
          hint: "or point AGENTD_URL / --config at the daemon you mean",
          cause: error,
        },
      );
    }
    const payload: unknown = await response.json().catch(() => undefined);
    if (!response.ok) throw this.#errorOf(response, payload);
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw new AgentdError(
        "INTERNAL",
        `unexpected answer from ${method} ${path}: ${parsed.error.issues[0]?.message}`,
        {
          hint: "the daemon and this agentd may be different versions",
        },
      );
    }
    return parsed.data;
  }

  #errorOf(response: Response, payload: unknown): AgentdError {
    const parsed = ErrorBodySchema.safeParse(payload);
    if (!parsed.success) {
      return new AgentdError(
        "INTERNAL",
        `${this.baseUrl} answered ${response.status} without an agentd error body`,
      );
    }
    const { code, message, hint } = parsed.data.error;
    const known = (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : "INTERNAL";
    const tokenHint =
      known === "UNAUTHORIZED"
        ? "pass --config of the daemon (its token is in <data_dir>/api.token), or set AGENTD_TOKEN"
        : hint;
    return new AgentdError(known, message, tokenHint === undefined ? {} : { hint: tokenHint });
  }
}

/** The token a client presents: `AGENTD_TOKEN`, else `server.token`, else `<data_dir>/api.token`. */
export function clientToken(config: Config, environment: NodeJS.ProcessEnv): string | undefined {
  const fromEnvironment = environment.AGENTD_TOKEN;
  if (fromEnvironment !== undefined && fromEnvironment !== "") return fromEnvironment;
  if (config.server.token !== undefined && config.server.token !== "") return config.server.token;
  if (config.server.auth === "none") return undefined;
  return readApiTokenFile(config.data_dir);
}

/** The client and the `--json` flag of a command, from its global options. */
export function clientOf(command: Command, io: ClientCommandIo): { client: DaemonClient; json: boolean } {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return { client: DaemonClient.fromConfig(globals.config, io.environment), json: Boolean(globals.json) };
}
