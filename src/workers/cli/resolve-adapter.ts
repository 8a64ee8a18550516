import type { Config } from "../../config/config-schema.js";
import { AgentdError } from "../../errors/agentd-error.js";
import type { BuiltInAdapterOptions } from "./built-in-adapter-options.js";
import type { CliAdapter } from "./cli-adapter.js";
import { claudeAdapter } from "./claude-adapter.js";
import { codexAdapter } from "./codex-adapter.js";
import { geminiAdapter } from "./gemini-adapter.js";
import { genericAdapter } from "./generic-adapter.js";

const BUILT_IN_ADAPTERS: Record<string, (options?: BuiltInAdapterOptions) => CliAdapter> = {
  claude: claudeAdapter,
  gemini: geminiAdapter,
  codex: codexAdapter,
};

/**
 * The adapter for an agent's `cli.tool`. A config `cli_tools` entry named claude, gemini or codex
 * merges with the built-in: its `command` replaces the tool's, its `env` is added, its `args` come
 * after the built-in's own arguments (its `output` is the built-in's); any other name must be a
 * `cli_tools` entry.
 */
export function resolveAdapter(tool: string, cliTools: Config["cli_tools"]): CliAdapter {
  const configured = Object.hasOwn(cliTools, tool) ? cliTools[tool] : undefined;
  const builtIn = Object.hasOwn(BUILT_IN_ADAPTERS, tool) ? BUILT_IN_ADAPTERS[tool] : undefined;
  if (builtIn) {
    return builtIn({
      command: configured?.command,
      environment: configured?.env,
      configArguments: configured?.args,
    });
  }
  if (configured) return genericAdapter(tool, configured);
  const known = [...Object.keys(BUILT_IN_ADAPTERS), ...Object.keys(cliTools)].join(", ");
  throw new AgentdError("CLI_NOT_INSTALLED", `unknown CLI tool "${tool}"`, {
    field: "cli.tool",
    hint: `use one of ${known}, or add "${tool}" under cli_tools in config.yaml`,
  });
}
