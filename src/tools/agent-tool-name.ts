/** The tool a sub-agent is offered under: `agent__<id>` (ids are already API-safe). */
export const AGENT_TOOL_PREFIX = "agent__";

export function agentToolName(agentId: string): string {
  return `${AGENT_TOOL_PREFIX}${agentId}`;
}

/** The sub-agent id of an `agent__<id>` tool name, or undefined for any other tool. */
export function agentIdOfTool(toolName: string): string | undefined {
  return toolName.startsWith(AGENT_TOOL_PREFIX) ? toolName.slice(AGENT_TOOL_PREFIX.length) : undefined;
}
