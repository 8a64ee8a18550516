import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { traceContextHeaders } from "../telemetry/trace-scope.js";
import type { McpServerConfig } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import type { McpConnection, McpConnectOptions } from "./mcp-connection.js";
import { MIN_START_MILLISECONDS } from "./mcp-start-timeout.js";
import { mcpCallFailure, mcpUnavailable, messageOf } from "./mcp-failure.js";

export interface McpServerSessionOptions {
  /** The server's key in config `mcp_servers`. */
  name: string;
  config: McpServerConfig;
  /** The sandbox of a stdio server (undefined for one reached over HTTP). */
  sandbox: SandboxPolicy | undefined;
  /** Limit of each call (config `tools.http_timeout`); starting gets at least a minute. */
  timeoutMilliseconds: number;
  killGraceMilliseconds: number;
  logger: Logger;
}

/** One start of the server, and who waits for it. */
interface McpStart {
  readonly connection: Promise<McpConnection>;
  /** Cancels this start only (close() cancels every start through the session's lifetime). */
  readonly controller: AbortController;
  /** Runs waiting, each with its signal; a wait without a signal holds the start to the end. */
  waiters: number;
  held: boolean;
  settled: boolean;
}

/**
 * One configured MCP server, started on first use and shared by every run. Concurrent first uses
 * share one start; a run that stops stops waiting, and when no run waits any more a start still
 * in progress is cancelled (its processes ended). A server that failed to start, or died, is
 * started again on the next use. The tool list is cached until the server says it changed.
 */
export class McpServerSession {
  readonly name: string;
  readonly #options: McpServerSessionOptions;
  #start: McpStart | undefined;
  #tools: Promise<Tool[]> | undefined;
  /** Aborted by close(): cancels a start or a listing in progress instead of waiting it out. */
  readonly #lifetime = new AbortController();

  constructor(options: McpServerSessionOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /**
   * The server's tools, listed once per start (and again after a list-changed notification).
   * `signal` (the run's) ends this caller's wait with its reason.
   */
  async tools(signal?: AbortSignal): Promise<Tool[]> {
    await this.#waitForStart(signal);
    if (!this.#tools) {
      const listing = this.#listTools();
      this.#tools = listing;
      listing.catch(() => {
        if (this.#tools === listing) this.#tools = undefined;
      });
    }
    return untilAborted(this.#tools, signal);
  }

  /** Calls one tool with the run's signal; a dead or missing server is MCP_UNAVAILABLE. */
  async call(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const connection = await this.#waitForStart(signal);
    const timeout = this.#options.timeoutMilliseconds;
    try {
      // The tool call's trace context rides in `_meta` (W3C `traceparent`), where MCP servers that
      // trace look for it; nothing is added when the run is not traced.
      const meta = traceContextHeaders(signal);
      const request = { name: tool, arguments: input, ...(meta.traceparent ? { _meta: meta } : {}) };
      const result = await connection.client.callTool(request, undefined, {
        signal,
        timeout,
      });
      if ("toolResult" in result) {
        return { content: [{ type: "text", text: JSON.stringify(result.toolResult) }] };
      }
      return result as CallToolResult;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw mcpCallFailure({ server: this.name, connection }, tool, timeout, error);
    }
  }

  /**
   * Ends the server (and its processes); later uses fail with MCP_UNAVAILABLE. A start still in
   * progress (a slow `npx -y`, a server that never answers) is cancelled, not waited for.
   */
  async close(): Promise<void> {
    this.#lifetime.abort(
      new AgentdError("MCP_UNAVAILABLE", `MCP server "${this.name}" is closed: agentd is shutting down`),
    );
    const connection = this.#start?.connection;
    this.#start = undefined;
    this.#tools = undefined;
    await connection?.then((started) => started.close()).catch(() => undefined);
  }

  async #listTools(): Promise<Tool[]> {
    const connection = await this.#connect().connection;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: Math.max(this.#options.timeoutMilliseconds, MIN_START_MILLISECONDS),
          signal: this.#lifetime.signal,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch (error) {
      const what = `could not list its tools: ${messageOf(error)}`;
      throw mcpUnavailable({ server: this.name, connection }, what, error);
    }
    return tools;
  }

  /**
   * Waits for the server's start as one of its waiters: `signal` aborting ends this wait with its
   * reason, and cancels the start when no other run waits for it (without a signal, the wait holds
   * the start until it ends).
   */
  async #waitForStart(signal: AbortSignal | undefined): Promise<McpConnection> {
    const start = this.#connect();
    if (!signal) start.held = true;
    if (!signal || start.settled) return untilAborted(start.connection, signal);
    start.waiters += 1;
    const leave = () => {
      start.waiters -= 1;
      if (start.waiters > 0 || start.held || start.settled) return;
      start.controller.abort(
        new AgentdError("MCP_UNAVAILABLE", `MCP server "${this.name}" was not started: no run waits for it`),
      );
    };
    signal.addEventListener("abort", leave, { once: true });
    try {
      return await untilAborted(start.connection, signal);
    } finally {
      signal.removeEventListener("abort", leave);
    }
  }

  /** The start in progress or done, or a new one. */
  #connect(): McpStart {
    if (this.#lifetime.signal.aborted) {
      const closed = Promise.reject(this.#lifetime.signal.reason as AgentdError);
      return { connection: closed, controller: new AbortController(), waiters: 0, held: true, settled: true };
    }
    if (!this.#start) {
      const controller = new AbortController();
      // The MCP client is loaded with the first server started: a run without MCP never loads it.
      const attempt: Promise<McpConnection> = connectLazily({
        ...this.#options,
        onClose: () => this.#forget(attempt),
        onToolsChanged: () => {
          this.#options.logger.info("MCP server tools changed; listing them again");
          this.#tools = undefined;
        },
        signal: AbortSignal.any([this.#lifetime.signal, controller.signal]),
      });
      const start: McpStart = { connection: attempt, controller, waiters: 0, held: false, settled: false };
      this.#start = start;
      void attempt.then(
        () => (start.settled = true),
        (error: unknown) => {
          start.settled = true;
          // The operator's first clue that a configured server is broken; the run gets the error.
          this.#options.logger.warn(
            // The logger already names the server.
            { err: error instanceof Error ? error.message : String(error) },
            "MCP server could not start",
          );
          this.#forget(attempt);
        },
      );
    }
    return this.#start;
  }

  /** Drops a connection that ended, so the next use starts the server again. */
  #forget(attempt: Promise<McpConnection>): void {
    if (this.#start?.connection !== attempt) return;
    this.#start = undefined;
    this.#tools = undefined;
    // What is left of the server's process tree is ended even when the server died on its own.
    attempt.then((connection) => connection.close()).catch(() => undefined);
  }
}

/** `promise`, or `signal`'s reason as soon as it aborts (the work itself goes on for others). */
function untilAborted<Value>(promise: Promise<Value>, signal: AbortSignal | undefined): Promise<Value> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<Value>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", abort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

async function connectLazily(options: McpConnectOptions): Promise<McpConnection> {
  const { connectMcpServer } = await import("./mcp-connection.js");
  return connectMcpServer(options);
}
