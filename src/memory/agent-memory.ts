import type { AgentDefinition } from "../definitions/agent-definition.js";
import { MEMORY_TOOL_NAMES } from "./memory-tool-names.js";
import { type MemorySettings, NO_MEMORY } from "./memory-settings.js";

/** An agent's memory settings (`none` when its file has no `memory:`). */
export function memorySettingsOf(definition: Pick<AgentDefinition, "frontmatter">): MemorySettings {
  return definition.frontmatter.memory ?? NO_MEMORY;
}

/**
 * The tools an agent offers once its memory is applied: the memory tools join a `memory: write`
 * agent's list, unless `capabilities: no-tools` offers none.
 */
export function withMemoryTools(
  tools: readonly string[],
  settings: MemorySettings | undefined,
  capabilities: string,
): string[] {
  if (settings?.mode !== "write" || capabilities === "no-tools") return [...tools];
  return [...tools, ...MEMORY_TOOL_NAMES.filter((name) => !tools.includes(name))];
}
