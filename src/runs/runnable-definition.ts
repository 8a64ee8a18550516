import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { AgentLookup } from "./agent-availability.js";

/**
 * The definition a new run of `agentId` uses. Throws NOT_FOUND for an unknown agent, CONFLICT (with
 * its errors) for an agent without a valid version or a disabled one.
 */
export function runnableDefinition(agents: AgentLookup, agentId: string): AgentDefinition {
  const availability = agents(agentId);
  if (!availability) {
    throw new AgentdError("NOT_FOUND", `no agent "${agentId}"`, {
      hint: "GET /agents lists the agents; an agent is a Markdown file in agents_dir",
    });
  }
  if (availability.state === "invalid") {
    const first = availability.errors[0] ?? "unknown error";
    throw new AgentdError("CONFLICT", `agent "${agentId}" is invalid: ${first}`, {
      hint: "fix the agent file (agentd validate shows every error)",
      details: { state: "invalid", errors: availability.errors },
    });
  }
  if (availability.state === "disabled") {
    const { switchedOff } = availability;
    if (switchedOff !== undefined) {
      throw new AgentdError(
        "AGENT_DISABLED",
        `agent "${agentId}" is disabled (by ${switchedOff.by} at ${switchedOff.at})`,
        {
          hint: `turn it back on to run it: agentd enable ${agentId}, the dashboard's toggle, or POST /agents/${agentId}/enable`,
          details: { state: "disabled", disabled_by: "operator", ...switchedOff },
        },
      );
    }
    throw new AgentdError("AGENT_DISABLED", `agent "${agentId}" is disabled by its file (enabled: false)`, {
      file: availability.definition.file,
      field: "enabled",
      hint: "set enabled: true in its frontmatter to run it",
      details: { state: "disabled", disabled_by: "file" },
    });
  }
  return availability.definition;
}

/** The task of a run: the one asked for, else the agent's `task`, else its schedule's task. */
export function pickTask(task: string | undefined, definition: AgentDefinition): string {
  const candidates = [task, definition.frontmatter.task, definition.frontmatter.schedule?.task];
  const found = candidates.find((candidate) => candidate !== undefined && candidate.trim() !== "");
  if (found !== undefined) return found;
  throw new AgentdError(
    "BAD_REQUEST",
    `no task given for a run of ${definition.id}, and the agent has no default task`,
    {
      file: definition.file,
      field: "task",
      hint: 'send { "task": "…" }, or give the agent a task: in its frontmatter',
    },
  );
}
