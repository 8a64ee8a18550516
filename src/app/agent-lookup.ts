import type { DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import type { AgentLookup } from "../runs/agent-availability.js";
import { switchNoteOf } from "./switched-definitions.js";

/**
 * The run manager's view of an agent, from the registry's current snapshot: the definition that
 * serves the id (the last valid one while the file is broken), else the errors of its file(s),
 * masked by `redact`: they quote the file (a value pasted in the wrong field) and reach a refused
 * run's caller and a parent agent's model.
 */
export function agentLookupFrom(
  snapshot: () => DefinitionSnapshot,
  redact: (text: string) => string = (text) => text,
): AgentLookup {
  return (agentId) => {
    const current = snapshot();
    const definition = current.get(agentId);
    if (definition) {
      return definition.frontmatter.enabled
        ? { state: "ready", definition }
        : { state: "disabled", definition, switchedOff: switchNoteOf(definition) };
    }
    const statuses = current.agents.filter((status) => status.id === agentId);
    if (statuses.length === 0) return undefined;
    const errors = statuses.flatMap((status) => status.errors.map((error) => redact(error.describe())));
    return {
      state: "invalid",
      errors: errors.length > 0 ? errors : [`agent "${agentId}" has no valid version`],
    };
  };
}
