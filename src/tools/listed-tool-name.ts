import { modelToolName } from "./model-tool-name.js";

/** How a call the model made maps to the agent's `tools` list. */
export interface ListedTool {
  /** The name as the agent file would write it (`mcp:github/create_issue`), for events. */
  name: string;
  /** The `tools` entry that offers it: the same name, or a `mcp:<server>/*` wildcard. */
  entry: string;
}

/**
 * Finds which entry of the agent's `tools` list offers the tool the model called by its API-safe
 * name, without asking any MCP server: so a call is matched even while a server is down, and a
 * built-in call never waits on one. Undefined when no entry offers it.
 */
export function listedTool(calledName: string, listed: readonly string[]): ListedTool | undefined {
  for (const entry of listed) {
    if (entry.endsWith("/*")) continue;
    if (entry === calledName || modelToolName(entry) === calledName) return { name: entry, entry };
  }
  for (const entry of listed) {
    if (!entry.endsWith("/*")) continue;
    const server = entry.slice(0, -1);
    const prefix = modelToolName(server);
    if (calledName.startsWith(server)) return { name: calledName, entry };
    if (calledName.startsWith(prefix)) return { name: `${server}${calledName.slice(prefix.length)}`, entry };
  }
  return undefined;
}
