import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { McpConnection } from "./mcp-connection.js";

/** Which server, reached how, for the messages of its failures. */
export interface McpFailureContext {
  server: string;
  connection: McpConnection;
}

/**
 * MCP_UNAVAILABLE: the server could not be used (it died, closed the connection, or would not
 * list its tools). Names the server, where it is, and what to check.
 */
export function mcpUnavailable(context: McpFailureContext, what: string, cause: unknown): AgentdError {
  const { server, connection } = context;
  return new AgentdError(
    "MCP_UNAVAILABLE",
    `MCP server "${server}" (${connection.transport.where}) ${what}`,
    {
      field: `mcp_servers.${server}`,
      hint: `${connection.transport.hint}; it is started again on the next use`,
      details: { server },
      cause,
    },
  );
}

/**
 * Why one tool call failed: no answer within the timeout (TOOL_TIMEOUT), the server went away
 * during the call (MCP_UNAVAILABLE), or anything else the server or the SDK said (TOOL_FAILED).
 */
export function mcpCallFailure(
  context: McpFailureContext,
  tool: string,
  timeoutMilliseconds: number,
  error: unknown,
): AgentdError {
  const name = `mcp:${context.server}/${tool}`;
  if (mcpErrorCode(error) === REQUEST_TIMEOUT) {
    return new AgentdError("TOOL_TIMEOUT", `${name} did not answer within ${timeoutMilliseconds} ms`, {
      hint: "raise config tools.http_timeout if the tool is slow",
      details: { server: context.server },
      cause: error,
    });
  }
  if (mcpErrorCode(error) === CONNECTION_CLOSED) {
    const reason = context.connection.transport.closeReason();
    if (reason !== undefined) {
      return new AgentdError("TOOL_FAILED", `${name}: the server ${reason}`, {
        hint: "ask the tool for a smaller part (a narrower query, a page, a range); the server is started again on the next call",
        details: { server: context.server },
        cause: error,
      });
    }
    return mcpUnavailable(context, `closed the connection during the call of ${tool}`, error);
  }
  return new AgentdError("TOOL_FAILED", `${name} failed: ${messageOf(error)}`, {
    details: { server: context.server },
    cause: error,
  });
}

/**
 * The SDK's `ErrorCode.RequestTimeout` and `ErrorCode.ConnectionClosed`: its types module builds
 * every MCP schema when imported, which a start or a run that uses no MCP server should not pay for.
 */
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;

/** The code of an McpError (the SDK's error class names itself so), else undefined. */
function mcpErrorCode(error: unknown): McpError["code"] | undefined {
  return error instanceof Error && error.name === "McpError" ? (error as McpError).code : undefined;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
