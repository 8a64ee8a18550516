import { BUILTIN_TOOL_NAMES } from "../../tools/builtin/builtin-tool-names.js";
import { mcpToolName } from "../../mcp/mcp-tool-name.js";

/** agentd's built-in tool for each Claude Code and opencode tool that has one. */
const TOOL_NAMES: Record<string, string> = {
  // Claude Code
  Read: "read_file",
  Write: "write_file",
  Edit: "write_file",
  MultiEdit: "write_file",
  Bash: "shell",
  Grep: "search_files",
  Glob: "search_files",
  LS: "list_dir",
  WebFetch: "http_request",
  // opencode
  read: "read_file",
  write: "write_file",
  edit: "write_file",
  patch: "write_file",
  bash: "shell",
  grep: "search_files",
  glob: "search_files",
  list: "list_dir",
  webfetch: "http_request",
};

/** The tools that only read, which Claude Code runs without asking. */
export const READING_TOOLS = ["read_file", "list_dir", "search_files"] as const;

/** Every built-in tool: what a foreign agent that lists no tools gets. */
export const ALL_BUILTIN_TOOLS: readonly string[] = BUILTIN_TOOL_NAMES;

/** A foreign tool entry taken apart: `Bash(git diff:*)` is tool `shell` with pattern `git diff*`. */
export interface ForeignTool {
  /** The agentd tool name, undefined when agentd has no counterpart. */
  tool: string | undefined;
  /** The rule pattern written in parentheses, in agentd's form; undefined for a bare name. */
  pattern: string | undefined;
  /** The entry as written. */
  written: string;
}

/**
 * Maps one Claude Code or opencode tool entry: `Read`, `Bash(npm test:*)`, `mcp__github__get_issue`
 * (an MCP tool: `mcp:github/get_issue`), `webfetch`.
 */
export function mapForeignTool(written: string): ForeignTool {
  const entry = written.trim();
  const mcp = /^mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*?)__(.+)$/.exec(entry);
  if (mcp?.[1] && mcp[2]) return { tool: mcpToolName(mcp[1], mcp[2]), pattern: undefined, written: entry };
  const withPattern = /^([A-Za-z]+)\((.*)\)$/.exec(entry);
  const name = withPattern?.[1] ?? entry;
  const tool = TOOL_NAMES[name] ?? (BUILTIN_TOOL_NAMES.includes(name as never) ? name : undefined);
  const raw = withPattern?.[2];
  return {
    tool,
    pattern: raw === undefined || raw === "" ? undefined : agentdPattern(tool, raw),
    written: entry,
  };
}

/**
 * Claude Code's rule patterns in agentd's: `git diff:*` (a command prefix) is `git diff*`, and
 * `domain:example.com` of WebFetch is every https URL of that host.
 */
function agentdPattern(tool: string | undefined, pattern: string): string {
  if (tool === "http_request" && pattern.startsWith("domain:")) {
    return `https://${pattern.slice("domain:".length)}/*`;
  }
  return pattern.endsWith(":*") ? `${pattern.slice(0, -2)}*` : pattern;
}

/** A rule for `tool`, with its pattern when there is one: `shell(git diff*)`. */
export function ruleOf(tool: string, pattern: string | undefined): string {
  return pattern === undefined ? tool : `${tool}(${pattern})`;
}
