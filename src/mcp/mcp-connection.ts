import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { packageVersion } from "../util/package-version.js";
import type { McpServerConfig } from "../config/config-schema.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { Logger } from "../logging/logger.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { messageOf } from "./mcp-failure.js";
import { createMcpTransport, type McpTransport } from "./mcp-transport.js";
import { MIN_START_MILLISECONDS } from "./mcp-start-timeout.js";

/** The client name and version agentd introduces itself with to every MCP server. */
const CLIENT_INFO = { name: "agentd", version: packageVersion() };

export interface McpConnectOptions {
  /** The server's key in config `mcp_servers`. */
  name: string;
  config: McpServerConfig;
  /** The sandbox of a stdio server (undefined for one reached over HTTP). */
  sandbox: SandboxPolicy | undefined;
  /** The limit of one request; the handshake gets at least MIN_START_MILLISECONDS. */
  timeoutMilliseconds: number;
  killGraceMilliseconds: number;
  logger: Logger;
  /** Called once when the connection ends, whether the server died or close() was called. */
  onClose: () => void;
  /** Called when the server says its list of tools changed. */
  onToolsChanged: () => void;
  /** Cancels the start (the handshake): whatever was started is ended, and the start fails. */
  signal: AbortSignal;
}

/** A started MCP server: its client, and the one way to end it and every process it started. */
export interface McpConnection {
  readonly client: Client;
  /** Where the server is and what to check, for error messages. */
  readonly transport: Pick<McpTransport, "where" | "hint" | "stderrTail" | "closeReason">;
  /** Ends the session and, for stdio, the server's whole process tree. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts one server (spawns the stdio command or opens the HTTP session) and completes the MCP
 * handshake. A server that cannot be started, does not answer, or whose start `signal` cancels is
 * MCP_UNAVAILABLE, naming the server and what to check; whatever it started is ended first.
 */
export async function connectMcpServer(options: McpConnectOptions): Promise<McpConnection> {
  const { name, logger } = options;
  const transport = await createMcpTransport(options);
  const client = new Client(CLIENT_INFO, {
    capabilities: {},
    listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => options.onToolsChanged() } },
  });
  client.onerror = (error) => logger.debug({ err: error }, "MCP transport error");
  let closed = false;
  client.onclose = () => {
    if (closed) return;
    closed = true;
    logger.info("MCP server connection closed");
    options.onClose();
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await transport.noteProcesses();
      await client.close().catch((error: unknown) => logger.debug({ err: error }, "MCP close"));
      await transport.endProcesses();
    })());
  try {
    await client.connect(transport.transport, {
      timeout: Math.max(options.timeoutMilliseconds, MIN_START_MILLISECONDS),
      signal: options.signal,
    });
  } catch (error) {
    await close();
    throw new AgentdError("MCP_UNAVAILABLE", startFailure(name, transport, error), {
      field: `mcp_servers.${name}`,
      hint: transport.hint,
      details: { server: name },
      cause: error,
    });
  }
  await transport.noteProcesses();
  logger.info({ server: name, version: client.getServerVersion() }, "MCP server started");
  return { client, transport, close };
}

function startFailure(name: string, transport: McpTransport, error: unknown): string {
  const reason = messageOf(error);
  const stderr = transport.stderrTail().trim().split("\n").slice(-3).join(" | ");
  return `MCP server "${name}" (${transport.where}) could not be started: ${reason}${stderr ? ` (its stderr: ${stderr})` : ""}`;
}
