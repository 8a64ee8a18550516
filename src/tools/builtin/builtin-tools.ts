import type { ToolDefinition } from "../tool-definition.js";

/** Every built-in tool (SPEC 1 `tools`), by the name an agent lists. */
export function builtinTools(): ToolDefinition[] {
  return [];
}
