import type { AgentDefinition } from "../../definitions/agent-definition.js";
import { type PermissionRule, parsePermissionRule } from "../../permissions/permission-rule.js";

/** The agent's tools, permissions and limits as a CLI adapter translates them into its own flags. */
export interface CliRules {
  /** agentd tool names the agent lists; empty leaves the CLI its own tools. */
  tools: string[];
  allow: PermissionRule[];
  ask: PermissionRule[];
  deny: PermissionRule[];
  maxIterations: number;
  maxCostUsd: number;
  maxTokens: number;
}

/** The rules of one run, from the agent's definition (config defaults already merged in). */
export function cliRulesOf(definition: AgentDefinition): CliRules {
  return {
    tools: definition.frontmatter.tools,
    allow: definition.permissions.allow.map(parsePermissionRule),
    ask: definition.permissions.ask.map(parsePermissionRule),
    deny: definition.permissions.deny.map(parsePermissionRule),
    maxIterations: definition.limits.max_iterations,
    maxCostUsd: definition.limits.max_cost_usd,
    maxTokens: definition.limits.max_tokens,
  };
}

/** No tools, no rules, agentd's default limits: for adapters built outside a run. */
export const OPEN_RULES: CliRules = Object.freeze({
  tools: [],
  allow: [],
  ask: [],
  deny: [],
  maxIterations: 50,
  maxCostUsd: 1,
  maxTokens: 100_000,
});

/**
 * The `shell` pattern of a rule as a command prefix, when it is one: `git log*` and `rm *` are the
 * prefixes `git log` and `rm`; a pattern with a `*` elsewhere is not a prefix.
 */
export function commandPrefixOf(pattern: string): string | undefined {
  const body = pattern.replace(/ ?\*$/, "");
  return body.includes("*") || body.trim() === "" ? undefined : body.trim();
}

/** Splits `mcp:<server>/<tool>` (a `*` tool matches the server's every tool). */
export function mcpToolOf(tool: string): { server: string; tool: string } | undefined {
  const match = /^mcp:([^/]+)\/(.+)$/.exec(tool);
  return match?.[1] && match[2] ? { server: match[1], tool: match[2] } : undefined;
}
