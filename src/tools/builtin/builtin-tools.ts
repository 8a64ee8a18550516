import type { ToolDefinition } from "../tool-definition.js";
import { httpRequestTool } from "./http-request-tool.js";
import { listDirTool } from "./list-dir-tool.js";
import { readFileTool } from "./read-file-tool.js";
import { searchFilesTool } from "./search-files-tool.js";
import { shellTool } from "./shell-tool.js";
import { writeFileTool } from "./write-file-tool.js";

/** Every built-in tool (SPEC 1 `tools`), by the name an agent lists. */
export function builtinTools(): ToolDefinition[] {
  return [readFileTool, writeFileTool, listDirTool, searchFilesTool, shellTool, httpRequestTool];
}
