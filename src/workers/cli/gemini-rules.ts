import type { PermissionRule } from "../../permissions/permission-rule.js";
import { type CliRules, commandPrefixOf, mcpToolOf } from "./cli-rules.js";

/** agentd's built-in tools as Gemini CLI names them. */
const GEMINI_TOOLS: Record<string, string[]> = {
  read_file: ["read_file", "read_many_files"],
  write_file: ["write_file", "replace"],
  list_dir: ["list_directory", "glob"],
  search_files: ["grep_search", "glob"],
  shell: ["run_shell_command"],
  http_request: ["web_fetch"],
};

/** Above Gemini's own default and write rules (priorities 10–15), so the agent's rules win. */
const ALLOW_PRIORITY = 500;
const DENY_PRIORITY = 900;

/**
 * The agent's rules as a Gemini CLI policy file (TOML, loaded with `--policy`): a `deny` rule per
 * deny rule, an `allow` rule per allow rule, and with `tools` a deny of every built-in the agent
 * does not list. A `shell` pattern that is a command prefix (`git log*`) becomes `commandPrefix`;
 * any other pattern becomes `argsPattern` on the call's arguments. Undefined when there is no rule.
 */
export function geminiPolicy(rules: CliRules): string | undefined {
  const blocks: string[] = [];
  for (const rule of rules.deny) blocks.push(...policyRules(rule, "deny", DENY_PRIORITY));
  if (rules.tools.length > 0) {
    const listed = new Set(rules.tools.flatMap((tool) => GEMINI_TOOLS[tool] ?? []));
    const unlisted = Object.values(GEMINI_TOOLS)
      .flat()
      .filter((name) => !listed.has(name));
    for (const name of new Set(unlisted)) blocks.push(policyBlock(name, "deny", DENY_PRIORITY, {}));
  }
  for (const rule of rules.allow) blocks.push(...policyRules(rule, "allow", ALLOW_PRIORITY));
  return blocks.length === 0 ? undefined : `${blocks.join("\n\n")}\n`;
}

function policyRules(rule: PermissionRule, decision: "allow" | "deny", priority: number): string[] {
  const mcp = mcpToolOf(rule.tool);
  if (mcp) {
    const name = mcp.tool === "*" ? `${mcp.server}__*` : `${mcp.server}__${mcp.tool}`;
    return [policyBlock(name, decision, priority, {})];
  }
  const names = rule.tool === "*" ? Object.values(GEMINI_TOOLS).flat() : (GEMINI_TOOLS[rule.tool] ?? []);
  return [...new Set(names)].map((name) => {
    if (rule.pattern === undefined) return policyBlock(name, decision, priority, {});
    const prefix = name === "run_shell_command" ? commandPrefixOf(rule.pattern) : undefined;
    if (prefix !== undefined) return policyBlock(name, decision, priority, { commandPrefix: prefix });
    return policyBlock(name, decision, priority, { argsPattern: globToExpression(rule.pattern) });
  });
}

function policyBlock(
  toolName: string,
  decision: "allow" | "deny",
  priority: number,
  match: { commandPrefix?: string; argsPattern?: string },
): string {
  const lines = ["[[rule]]", `toolName = ${tomlString(toolName)}`];
  if (match.commandPrefix !== undefined) lines.push(`commandPrefix = ${tomlString(match.commandPrefix)}`);
  if (match.argsPattern !== undefined) lines.push(`argsPattern = ${tomlString(match.argsPattern)}`);
  lines.push(`decision = "${decision}"`, `priority = ${priority}`);
  if (decision === "deny") lines.push(`denyMessage = "denied by the agent's permissions in agentd"`);
  return lines.join("\n");
}

/** An agentd glob (`*` = anything) as a regular expression over the JSON of the call's arguments. */
function globToExpression(pattern: string): string {
  return pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, "\\$&"))
    .join(".*");
}

/** A TOML basic string: JSON's escapes are TOML's. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}
