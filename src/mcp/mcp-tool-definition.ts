import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolDefinition } from "../tools/tool-definition.js";
import { mcpResultText } from "./mcp-result-text.js";
import type { McpServerSession } from "./mcp-server-session.js";
import { mcpToolName } from "./mcp-tool-name.js";

/**
 * One tool of an MCP server as the executor sees it: named `mcp:<server>/<tool>`, described and
 * typed by the server. Any JSON object is accepted as arguments (the server validates them and
 * says what is wrong); permission rules match the arguments as JSON text. Each call goes through
 * the session, so a server started again after a crash serves tools listed before.
 */
export function mcpToolDefinition(session: McpServerSession, tool: Tool): ToolDefinition {
  const parameters: Record<string, unknown> = { ...tool.inputSchema };
  delete parameters["$schema"];
  const description = tool.description ?? tool.title ?? tool.name;
  return {
    name: mcpToolName(session.name, tool.name),
    description: `[MCP server ${session.name}] ${description}`,
    parameters,
    parse: (input) =>
      isPlainObject(input)
        ? { ok: true, value: input }
        : { ok: false, message: "arguments must be a JSON object" },
    subject: (value) => ({ kind: "texts", texts: [JSON.stringify(value)] }),
    run: async (value, context) => {
      const result = await session.call(tool.name, value as Record<string, unknown>, context.signal);
      const output = mcpResultText(result);
      return result.isError === true ? { ok: false, code: "TOOL_FAILED", output } : { ok: true, output };
    },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
