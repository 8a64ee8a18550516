/** The names of the built-in tools, for validating agent files without loading the tools. */
export const BUILTIN_TOOL_NAMES = [
  "read_file",
  "write_file",
  "list_dir",
  "search_files",
  "shell",
  "http_request",
] as const;

/**
 * Built-in tools that act on the run rather than the world (`ask_human`): an agent lists them by
 * name, but they are never implied, e.g. by a foreign agent file that names no tools.
 */
export const RUN_TOOL_NAMES = ["ask_human"] as const;
