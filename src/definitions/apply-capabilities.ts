import type { SandboxSettings } from "../config/sandbox-settings.js";
import type { AgentFrontmatter, CapabilityMode } from "./agent-schema.js";

/** Built-in tools that write files or run commands: a `read-only` agent is not offered them. */
const WRITING_TOOLS: readonly string[] = ["write_file", "shell"];

/** An agent's tools, sub-agents and sandbox narrowed to its capability mode. */
export interface CapabilityNarrowing {
  tools: string[];
  agents: string[];
  sandbox: SandboxSettings;
  /** What the mode removed that the agent file asked for, for `agentd validate`. */
  warnings: string[];
}

/**
 * Applies `capabilities`: `full` changes nothing; `read-only` keeps the tools that only read
 * (read_file, list_dir, search_files, http_request limited to GET/HEAD/OPTIONS, ask_human), drops
 * write_file, shell, every MCP tool (agentd cannot know which of them write) and every sub-agent
 * (a child runs with its own capabilities), and makes the sandbox read-only; `no-tools` offers
 * nothing and makes the sandbox read-only too. A sandbox that is `off` stays off, with a warning.
 */
export function applyCapabilities(
  mode: CapabilityMode,
  frontmatter: Pick<AgentFrontmatter, "tools" | "agents">,
  sandbox: SandboxSettings,
): CapabilityNarrowing {
  if (mode === "full") return { tools: frontmatter.tools, agents: frontmatter.agents, sandbox, warnings: [] };
  const kept = mode === "no-tools" ? [] : frontmatter.tools.filter(readsOnly);
  const removedTools = frontmatter.tools.filter((tool) => !kept.includes(tool));
  const warnings: string[] = [];
  if (removedTools.length > 0) {
    warnings.push(`tools: capabilities: ${mode} removes ${removedTools.join(", ")}`);
  }
  if (frontmatter.agents.length > 0) {
    warnings.push(`agents: capabilities: ${mode} removes the sub-agents ${frontmatter.agents.join(", ")}`);
  }
  if (sandbox.mode === "off") {
    warnings.push(
      `capabilities: ${mode} with sandbox: off — nothing keeps a CLI worker or a hook from writing`,
    );
  }
  return {
    tools: kept,
    agents: [],
    sandbox: sandbox.mode === "off" ? sandbox : { ...sandbox, mode: "read-only" },
    warnings,
  };
}

function readsOnly(tool: string): boolean {
  return !WRITING_TOOLS.includes(tool) && !tool.startsWith("mcp:");
}
