import { AgentdError } from "../errors/agentd-error.js";
import { didYouMean } from "../schema/known-keys.js";
import type { ParsedAgentFile } from "./parse-agent-file.js";

/** The `agents:` list of every agent id, as its file declares it. */
export type AgentReferences = ReadonlyMap<string, readonly string[]>;

/**
 * Checks an agent's `agents:` list against every other agent file: an unknown id is an error with
 * a did-you-mean, and so is a list that leads back to the agent itself (a cycle: A → B → A), since
 * such a run could only end when a budget or the depth limit cut it.
 */
export function checkAgentReferences(agent: ParsedAgentFile, references: AgentReferences): AgentdError[] {
  const listed = agent.frontmatter?.agents ?? [];
  const errors: AgentdError[] = [];
  const located = (index: number) => {
    const line = agent.lineOf(["agents", index]);
    return { file: agent.file, field: `agents[${index}]`, ...(line === undefined ? {} : { line }) };
  };
  listed.forEach((child, index) => {
    if (child === agent.id) {
      errors.push(
        new AgentdError("DEFINITION_INVALID", `agent "${agent.id}" lists itself in agents:`, {
          ...located(index),
          hint: "an agent cannot be its own sub-agent; remove it from agents:",
        }),
      );
      return;
    }
    if (!references.has(child)) {
      const suggestion = didYouMean(child, [...references.keys()]);
      errors.push(
        new AgentdError("DEFINITION_INVALID", `unknown agent "${child}" in agents:`, {
          ...located(index),
          hint: suggestion
            ? `did you mean "${suggestion}"?`
            : "name the id of another agent file (its file name without .md)",
        }),
      );
      return;
    }
    const cycle = pathBack(child, agent.id, references);
    if (cycle) {
      errors.push(
        new AgentdError(
          "DEFINITION_INVALID",
          `sub-agents form a cycle: ${[agent.id, ...cycle].join(" → ")}`,
          {
            ...located(index),
            hint: "an agent must not reach itself through agents:; remove one link of the cycle",
            details: { cycle: [agent.id, ...cycle] },
          },
        ),
      );
    }
  });
  return errors;
}

/** The chain of ids from `start` to `target` through `agents:` lists, or undefined when none. */
function pathBack(start: string, target: string, references: AgentReferences): string[] | undefined {
  const seen = new Set<string>();
  const walk = (id: string): string[] | undefined => {
    if (id === target) return [id];
    if (seen.has(id)) return undefined;
    seen.add(id);
    for (const next of references.get(id) ?? []) {
      const rest = walk(next);
      if (rest) return [id, ...rest];
    }
    return undefined;
  };
  return walk(start);
}
