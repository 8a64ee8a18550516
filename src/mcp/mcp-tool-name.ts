/** The prefix of every MCP tool name an agent lists: `mcp:<server>/<tool>`. */
export const MCP_PREFIX = "mcp:";

/** `mcp:<server>/<tool>` taken apart; `tool` is `*` for "every tool of the server". */
export interface McpToolName {
  server: string;
  tool: string;
}

/** The server and tool of `mcp:<server>/<tool>`, or undefined when the name has another form. */
export function parseMcpToolName(name: string): McpToolName | undefined {
  if (!name.startsWith(MCP_PREFIX)) return undefined;
  const rest = name.slice(MCP_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
}

/** The name an agent lists for `tool` of `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_PREFIX}${server}/${tool}`;
}
