import {
  ALL_BUILTIN_TOOLS,
  READING_TOOLS,
  type ForeignTool,
  mapForeignTool,
  ruleOf,
} from "./foreign-tool-names.js";
import {
  ignoreKey,
  mergePermissions,
  type TranslatedTools,
  type TranslationInput,
  translateTurnLimit,
} from "./foreign-translation.js";

/** Claude Code's keys this translator consumes, for detecting the dialect. */
export const CLAUDE_CODE_KEYS = [
  "disallowedTools",
  "maxTurns",
  "permissionMode",
  "color",
  "skills",
  "mcpServers",
  "hooks",
] as const;

/** Claude Code's short model names: they need an entry in `llm.model_aliases`. */
export const CLAUDE_CODE_MODELS = ["sonnet", "opus", "haiku", "inherit"] as const;

/**
 * A Claude Code sub-agent (`.claude/agents/*.md`) in agentd's terms: `tools` as a comma-separated
 * string (left out: every tool), `disallowedTools`, `maxTurns`, `permissionMode`. Reading tools
 * are allowed without asking, as in Claude Code; everything else follows agentd's rules.
 */
export function translateClaudeCode(input: TranslationInput): void {
  const { data } = input;
  const translated: TranslatedTools = { tools: [], allow: [], ask: [], deny: [] };
  if (data.tools === undefined) {
    translated.tools.push(...ALL_BUILTIN_TOOLS);
    input.note("tools", "left out: every built-in tool, as Claude Code gives an agent all of its tools");
  } else {
    for (const tool of mappedTools(input, "tools", data.tools)) {
      if (tool.tool === undefined) continue;
      addTool(translated.tools, tool.tool);
      if (tool.pattern !== undefined) translated.allow.push(ruleOf(tool.tool, tool.pattern));
    }
  }
  if (data.disallowedTools !== undefined) {
    for (const tool of mappedTools(input, "disallowedTools", data.disallowedTools)) {
      if (tool.tool === undefined) continue;
      if (tool.pattern !== undefined) translated.deny.push(ruleOf(tool.tool, tool.pattern));
      else translated.tools = translated.tools.filter((name) => name !== tool.tool);
    }
    delete data.disallowedTools;
  }
  applyPermissionMode(input, translated);
  translated.allow.push(...READING_TOOLS.filter((tool) => translated.tools.includes(tool)));
  data.tools = translated.tools;
  mergePermissions(data, translated);
  translateTurnLimit(input, "maxTurns");
  ignoreKey(input, "color", "display only");
  ignoreKey(input, "skills", "Claude Code's own extension; give the agent tools or a preset instead");
  ignoreKey(input, "mcpServers", "configure MCP servers in config mcp_servers and list their tools");
  ignoreKey(input, "hooks", "Claude Code's hooks run only inside Claude Code");
}

/** The entries of `tools` / `disallowedTools`: a comma-separated string or a list. */
function mappedTools(input: TranslationInput, key: string, value: unknown): ForeignTool[] {
  const entries =
    typeof value === "string"
      ? value.split(",")
      : Array.isArray(value)
        ? value.filter((entry): entry is string => typeof entry === "string")
        : [];
  const mapped = entries.filter((entry) => entry.trim() !== "").map(mapForeignTool);
  const unknown = mapped.filter((tool) => tool.tool === undefined).map((tool) => tool.written);
  if (unknown.length > 0) input.note(key, `no agentd counterpart, left out: ${unknown.join(", ")}`);
  const known = mapped.filter((tool) => tool.tool !== undefined);
  if (known.length > 0) {
    input.note(key, `understood as ${known.map((tool) => `${tool.written} → ${tool.tool}`).join(", ")}`);
  }
  return mapped;
}

function addTool(tools: string[], tool: string): void {
  if (!tools.includes(tool)) tools.push(tool);
}

/** `permissionMode`: plan reads only; acceptEdits allows writing; bypassPermissions allows all. */
function applyPermissionMode(input: TranslationInput, translated: TranslatedTools): void {
  const mode = input.data.permissionMode;
  if (mode === undefined) return;
  delete input.data.permissionMode;
  if (mode === "plan") {
    translated.tools = translated.tools.filter((tool) => (READING_TOOLS as readonly string[]).includes(tool));
    input.data.capabilities ??= "read-only";
    input.note("permissionMode", "plan: understood as reading tools only, capabilities: read-only");
  } else if (mode === "acceptEdits") {
    if (translated.tools.includes("write_file")) translated.allow.push("write_file");
    input.note("permissionMode", "acceptEdits: understood as allow write_file");
  } else if (mode === "bypassPermissions") {
    translated.allow.push(...translated.tools);
    input.note(
      "permissionMode",
      "bypassPermissions: understood as allow every listed tool (deny rules still apply)",
    );
  } else if (mode === "default") {
    input.note("permissionMode", "default: agentd's rules apply (unlisted tools ask)");
  } else {
    input.note(
      "permissionMode",
      `ignored: "${String(mode)}" is not a mode agentd knows; agentd's rules apply`,
    );
  }
}
