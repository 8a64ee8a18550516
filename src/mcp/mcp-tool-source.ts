import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import path from "node:path";
import type { Config, McpServerConfig } from "../config/config-schema.js";
import type { Logger } from "../logging/logger.js";
import type { ToolSource } from "../tools/tool-catalog.js";
import type { ToolDefinition } from "../tools/tool-definition.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { SandboxPolicy } from "../sandbox/sandbox-policy.js";
import { mergeSandboxSettings, type SandboxSettings } from "../config/sandbox-settings.js";
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
  /** Config `sandbox` (the daemon's default for every stdio server). */
  sandboxSettings: SandboxSettings;
  /** Resolves each stdio server's sandbox policy. */
  sandbox: SandboxHost;
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
          sandbox: "command" in config ? mcpServerSandbox(name, config, options) : undefined,
          timeoutMilliseconds: options.timeoutMilliseconds,
          killGraceMilliseconds: options.killGraceMilliseconds,
          logger: options.logger.child({ server: name }),
        }),
      );
    }
  }

  /** The source for config `mcp_servers`, with its limits taken from the config. */
  static fromConfig(config: Config, sandbox: SandboxHost, logger: Logger): McpToolSource {
    return new McpToolSource({
      servers: config.mcp_servers,
      sandboxSettings: config.sandbox,
      sandbox,
      timeoutMilliseconds: config.tools.http_timeout,
      killGraceMilliseconds: config.cli.kill_grace,
      logger,
    });
  }

  owns(name: string): boolean {
    return name.startsWith(MCP_PREFIX);
  }

  /** `signal` (the run's) ends the wait, and cancels a server start that no other run waits for. */
  async find(name: string, signal?: AbortSignal): Promise<ToolDefinition | undefined> {
    const parsed = parseMcpToolName(name);
    if (!parsed || parsed.tool === "*") return undefined;
    const tools = await this.#toolsOf(parsed.server, signal);
    return tools.find((tool) => tool.name === name);
  }

  async expand(name: string, signal?: AbortSignal): Promise<ToolDefinition[]> {
    const parsed = parseMcpToolName(name);
    if (!parsed) return [];
    if (parsed.tool === "*") return this.#toolsOf(parsed.server, signal);
    const tool = await this.find(name, signal);
    return tool ? [tool] : [];
  }

  /** Ends every started server and its processes. */
  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((session) => session.close()));
  }

  async #toolsOf(server: string, signal: AbortSignal | undefined): Promise<ToolDefinition[]> {
    const session = this.#sessions.get(server);
    if (!session) return [];
    const listed = await session.tools(signal);
    let definitions = this.#definitions.get(listed);
    if (!definitions) {
      definitions = listed.map((tool) => mcpToolDefinition(session, tool));
      this.#definitions.set(listed, definitions);
    }
    return definitions;
  }
}

/**
 * A stdio server's sandbox: config `sandbox` with the server's own `sandbox:` over it; it starts
 * in (and may write) `<project>/.agentd/mcp/<name>`, and its command stays visible wherever it is
 * installed.
 */
function mcpServerSandbox(
  name: string,
  config: Extract<McpServerConfig, { command: string }>,
  options: McpToolSourceOptions,
): SandboxPolicy {
  const workdir = path.join(path.dirname(options.sandbox.workspacesRoot), "mcp", name);
  return options.sandbox.policyFor({
    settings: mergeSandboxSettings(options.sandboxSettings, config.sandbox, workdir),
    workdir,
    owner: `MCP server "${name}"`,
    executables: [config.command],
  });
}
