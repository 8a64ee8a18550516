import type { CliToolConfig, Config } from "../../config/config-schema.js";
import type { CliRuleSupport } from "./cli-adapter.js";

/**
 * What checking an agent file needs to know of its CLI tool: how far the tool carries the agent's
 * rules, and its model when the agent names none. Kept apart from the adapters (their output
 * parsers and schemas), which only a run of a CLI agent loads; the adapters report the same.
 */
export interface CliToolRules {
  tool: string;
  defaultModel: string | undefined;
  ruleSupport: CliRuleSupport;
}

export const CLAUDE_RULES: CliToolRules = {
  tool: "claude",
  defaultModel: "sonnet",
  ruleSupport: { tools: true, permissions: true, maxIterations: true, reportsCost: true },
};

export const GEMINI_RULES: CliToolRules = {
  tool: "gemini",
  defaultModel: "gemini-2.5-flash",
  ruleSupport: { tools: true, permissions: true, maxIterations: true, reportsCost: false },
};

export const CODEX_RULES: CliToolRules = {
  tool: "codex",
  defaultModel: "gpt-5.5",
  ruleSupport: { tools: false, permissions: false, maxIterations: false, reportsCost: false },
};

const BUILT_IN_RULES: Record<string, CliToolRules> = {
  claude: CLAUDE_RULES,
  gemini: GEMINI_RULES,
  codex: CODEX_RULES,
};

/** A `cli_tools` tool of agentd's own (not a built-in): only Claude's output format reports a cost. */
export function genericRuleSupport(config: CliToolConfig): CliRuleSupport {
  return { tools: false, permissions: false, maxIterations: false, reportsCost: config.output === "claude" };
}

/** The rules of `cli.tool` as resolveAdapter would find its adapter; undefined for an unknown tool. */
export function cliToolRules(tool: string, cliTools: Config["cli_tools"]): CliToolRules | undefined {
  if (Object.hasOwn(BUILT_IN_RULES, tool)) return BUILT_IN_RULES[tool];
  const configured = Object.hasOwn(cliTools, tool) ? cliTools[tool] : undefined;
  return configured
    ? { tool, defaultModel: undefined, ruleSupport: genericRuleSupport(configured) }
    : undefined;
}
