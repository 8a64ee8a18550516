import { CLAUDE_CODE_KEYS, CLAUDE_CODE_MODELS, translateClaudeCode } from "./translate-claude-code.js";
import type { AgentDialect } from "./foreign-translation.js";
import { HOOK_POINTS } from "../../config/hook-settings.js";
import { OPENCODE_KEYS, isOpencodePermissions, translateOpencode } from "./translate-opencode.js";

export interface ForeignFrontmatter {
  dialect: AgentDialect;
  /** The frontmatter in agentd's form; the input itself for an agentd file. */
  data: Record<string, unknown>;
  /** One line per foreign key: what it was understood as, or why it was ignored. */
  notes: string[];
}

/**
 * Recognises Claude Code sub-agents and opencode agents, by their folder or by their keys and
 * shapes, and rewrites their frontmatter into agentd's. agentd's own files pass through untouched.
 */
export function translateForeignFrontmatter(
  data: Record<string, unknown>,
  options: { file: string; body: string; locate: (key: string) => string },
): ForeignFrontmatter {
  const dialect = detectDialect(data, options.file);
  if (dialect === "agentd") return { dialect, data, notes: [] };
  const copy = { ...data };
  const notes: string[] = [];
  const input = {
    data: copy,
    body: options.body,
    note: (key: string, message: string) => notes.push(`${options.locate(key)} ${key}: ${message}`),
  };
  if (dialect === "claude-code") translateClaudeCode(input);
  else translateOpencode(input);
  return { dialect, data: copy, notes };
}

function detectDialect(data: Record<string, unknown>, file: string): AgentDialect {
  const folder = file.split(/[\\/]/).slice(0, -1).join("/");
  if (/(^|\/)\.claude\/agents(\/|$)/.test(folder)) return "claude-code";
  if (/(^|\/)\.opencode\/agents?(\/|$)/.test(folder)) return "opencode";
  if (typeof data.tools === "string") return "claude-code";
  if (data.tools !== null && typeof data.tools === "object" && !Array.isArray(data.tools)) return "opencode";
  // agentd's own `hooks:` (before_tool, …) is no sign of Claude Code's (PreToolUse, …).
  const keys = Object.keys(data).filter((key) => key !== "hooks" || !isAgentdHooks(data.hooks));
  if (OPENCODE_KEYS.some((key) => keys.includes(key))) return "opencode";
  // `permissions: { edit: deny }`: opencode's rules under the plural some files use.
  if (isOpencodePermissions(data.permissions)) return "opencode";
  if (CLAUDE_CODE_KEYS.some((key) => keys.includes(key))) return "claude-code";
  if ((CLAUDE_CODE_MODELS as readonly unknown[]).includes(data.model)) return "claude-code";
  // A list of Claude Code's names (Read, Bash, mcp__server__tool) in a file copied elsewhere.
  if (
    Array.isArray(data.tools) &&
    data.tools.some((tool) => typeof tool === "string" && /^([A-Z]|mcp__)/.test(tool))
  ) {
    return "claude-code";
  }
  return "agentd";
}

function isAgentdHooks(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  return Object.keys(value).every((key) => (HOOK_POINTS as readonly string[]).includes(key));
}
