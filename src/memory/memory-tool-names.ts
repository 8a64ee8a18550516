/** The memory tools, offered to every agent with `memory: write`. */
export const MEMORY_TOOL_NAMES = ["memory_add", "memory_replace", "memory_remove"] as const;
