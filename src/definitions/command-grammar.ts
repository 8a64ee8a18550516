import type { Config } from "../config/config-schema.js";
import { loadBashParser } from "../permissions/shell-parser.js";
import type { DefinitionSnapshot } from "./definition-snapshot.js";

/**
 * Loads the bash grammar when some agent has a hook, or config an MCP server or CLI tool command:
 * the sandbox reads the scripts those commands run with it, synchronously, when it prepares a
 * policy (src/sandbox/script-candidates.ts). Tens of milliseconds, once; a project without such
 * commands never pays them.
 */
export async function loadGrammarForCommands(config: Config, snapshot: DefinitionSnapshot): Promise<void> {
  const hooks = snapshot.agents.some(({ definition }) => (definition?.hooks.length ?? 0) > 0);
  const servers = Object.values(config.mcp_servers).some((server) => "command" in server);
  const tools = Object.values(config.cli_tools).some((tool) => tool.command !== undefined);
  if (hooks || servers || tools) await loadBashParser();
}
