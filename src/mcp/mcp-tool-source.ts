import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { ToolSource } from "../tools/tool-catalog.js";
import type { ToolDefinition } from "../tools/tool-definition.js";
import { McpServerSession } from "./mcp-server-session.js";
import { mcpToolDefinition } from "./mcp-tool-definition.js";
import { MCP_PREFIX, parseMcpToolName } from "./mcp-tool-name.js";

export interface McpToolSourceOptions {
  /** Config `mcp_servers`, secrets already resolved. */
  servers: Config["mcp_servers"];
  /** Limit of each tool call (config `tools.http_timeout`); starting a server gets at least a minute. */
  timeoutMilliseconds: number;
  /** SIGTERM → SIGKILL delay when a stdio server is ended (config `cli.kill_grace`). */
  killGraceMilliseconds: number;
  logger: Logger;
}

/**
 * The tools of the MCP servers in config `mcp_servers`, by the names agents list:
 * `mcp:<server>/<tool>`, or `mcp:<server>/*` for every tool of a server. A server starts on the
 * first lookup that needs it; an unknown server or tool is simply not found. `close()` ends every
 * started server, so no stdio server outlives the daemon or the `agentd run` that started it.
 */
export class McpToolSource implements ToolSource {
  readonly #sessions = new Map<string, McpServerSession>();
  /** Definitions per listing, so one listing yields one definition per tool. */
  readonly #definitions = new WeakMap<Tool[], ToolDefinition[]>();

  constructor(options: McpToolSourceOptions) {
    for (const [name, config] of Object.entries(options.servers)) {
      this.#sessions.set(
        name,
        new McpServerSession({
          name,
          config,
          timeoutMilliseconds: options.timeoutMilliseconds,
          killGraceMilliseconds: options.killGraceMilliseconds,
          logger: options.logger.child({ server: name }),
        }),
      );
    }
  }

  /** The source for config `mcp_servers`, with its limits taken from the config. */
  static fromConfig(config: Config, logger: Logger): McpToolSource {
    return new McpToolSource({
      servers: config.mcp_servers,
      timeoutMilliseconds: config.tools.http_timeout,
      killGraceMilliseconds: config.cli.kill_grace,
      logger,
    });
  }

  owns(name: string): boolean {
    return name.startsWith(MCP_PREFIX);
  }

  async find(name: string): Promise<ToolDefinition | undefined> {
    const parsed = parseMcpToolName(name);
    if (!parsed || parsed.tool === "*") return undefined;
    const tools = await this.#toolsOf(parsed.server);
    return tools.find((tool) => tool.name === name);
  }

  async expand(name: string): Promise<ToolDefinition[]> {
    const parsed = parseMcpToolName(name);
    if (!parsed) return [];
    if (parsed.tool === "*") return this.#toolsOf(parsed.server);
    const tool = await this.find(name);
    return tool ? [tool] : [];
  }

  /** Ends every started server and its processes. */
  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((session) => session.close()));
  }

  async #toolsOf(server: string): Promise<ToolDefinition[]> {
    const session = this.#sessions.get(server);
    if (!session) return [];
    const listed = await session.tools();
    let definitions = this.#definitions.get(listed);
    if (!definitions) {
      definitions = listed.map((tool) => mcpToolDefinition(session, tool));
      this.#definitions.set(listed, definitions);
    }
    return definitions;
  }
}
