import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

/**
 * The environment a stdio MCP server starts from: the MCP SDK's default safe set (HOME, LOGNAME,
 * PATH, SHELL, TERM, USER), which the SDK's stdio transport adds under whatever it is given anyway.
 * The server's configured `env` goes over it. In the MCP room, so `agentd run` of an agent without
 * MCP servers never loads the SDK's stdio client.
 */
export function mcpServerEnvironment(): Record<string, string> {
  return getDefaultEnvironment();
}
