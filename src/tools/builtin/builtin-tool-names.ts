/** The names of the built-in tools, for validating agent files without loading the tools. */
export const BUILTIN_TOOL_NAMES = [
  "read_file",
  "write_file",
  "list_dir",
  "search_files",
  "shell",
  "http_request",
  "ask_human",
] as const;
