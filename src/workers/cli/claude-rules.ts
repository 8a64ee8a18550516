import type { PermissionRule } from "../../permissions/permission-rule.js";
import { type CliRules, mcpToolOf } from "./cli-rules.js";

/** agentd's built-in tools as Claude Code names them. */
const CLAUDE_TOOLS: Record<string, string[]> = {
  read_file: ["Read"],
  write_file: ["Write", "Edit", "NotebookEdit"],
  list_dir: ["Glob"],
  search_files: ["Grep", "Glob"],
  shell: ["Bash"],
  http_request: ["WebFetch"],
};
/** Claude tools whose rules take a path or command pattern in parentheses, as agentd's do. */
const PATTERN_TOOLS = new Set(["Bash", "Read", "Edit", "Write"]);

/**
 * The agent's rules as Claude Code flags: `--tools` (the built-ins it may use), `--allowedTools` and
 * `--disallowedTools` (one `=`-joined flag per rule, so a space inside `Bash(git log *)` stays),
 * `--max-turns` and `--max-budget-usd`. A deny rule whose pattern Claude cannot express denies the
 * whole tool (catching more, never less); such an allow rule is left out (Claude then denies).
 */
export function claudeRuleArguments(rules: CliRules): string[] {
  const builtIns = rules.tools.flatMap((tool) => CLAUDE_TOOLS[tool] ?? []);
  const allowed = rules.allow.flatMap((rule) => claudeRule(rule, false));
  const denied = rules.deny.flatMap((rule) => claudeRule(rule, true));
  return [
    ...(rules.tools.length > 0 ? [`--tools=${[...new Set(builtIns)].join(",")}`] : []),
    ...[...new Set(allowed)].map((rule) => `--allowedTools=${rule}`),
    ...[...new Set(denied)].map((rule) => `--disallowedTools=${rule}`),
    "--max-turns",
    String(rules.maxIterations),
    "--max-budget-usd",
    String(rules.maxCostUsd),
  ];
}

function claudeRule(rule: PermissionRule, deny: boolean): string[] {
  const mcp = mcpToolOf(rule.tool);
  if (mcp) {
    const name = mcp.tool === "*" ? `mcp__${mcp.server}` : `mcp__${mcp.server}__${mcp.tool}`;
    return rule.pattern === undefined || deny ? [name] : [];
  }
  const names = rule.tool === "*" ? Object.values(CLAUDE_TOOLS).flat() : (CLAUDE_TOOLS[rule.tool] ?? []);
  if (rule.pattern === undefined) return names;
  return names.flatMap((name) => {
    if (PATTERN_TOOLS.has(name)) return [`${name}(${rule.pattern})`];
    return deny ? [name] : [];
  });
}
