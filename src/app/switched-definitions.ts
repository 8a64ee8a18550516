import type { AgentDefinition } from "../definitions/agent-definition.js";
import type { AgentSwitches, SwitchNote } from "../definitions/agent-switches.js";
import type { AgentStatus, DefinitionSnapshot } from "../definitions/definition-snapshot.js";
import type { DefinitionSource } from "./definition-source.js";

/** The copies this module made of definitions an operator turned off, with the switch's note. */
const switchedOff = new WeakMap<AgentDefinition, SwitchNote>();

/** Who turned this definition off and when, if it is one an operator's switch turned off. */
export function switchNoteOf(definition: AgentDefinition): SwitchNote | undefined {
  return switchedOff.get(definition);
}

/** The definitions source plus the switches it honours: what the daemon composes. */
export interface SwitchedDefinitionSource extends DefinitionSource {
  readonly switches: AgentSwitches;
}

/**
 * The definitions as the daemon serves them: an agent an operator disabled reads as `enabled:
 * false`, so everything that already honours the file's `enabled` — the scheduler, the triggers,
 * new runs, the views — honours the switch too, with no second check to forget. A switch calls the
 * source's change listeners, as an edit of the file would. The snapshot is rebuilt only when the
 * source's snapshot or a switch changed (the dashboard polls the agents every second).
 */
export function withAgentSwitches(
  source: DefinitionSource,
  switches: AgentSwitches,
): SwitchedDefinitionSource {
  let cached: { inner: DefinitionSnapshot; generation: number; outer: DefinitionSnapshot } | undefined;
  let generation = 0;
  const copies = new WeakMap<AgentDefinition, AgentDefinition>();
  const switched = (definition: AgentDefinition): AgentDefinition => {
    const note = switches.disabled(definition.id);
    if (note === undefined || !definition.frontmatter.enabled) return definition;
    let copy = copies.get(definition);
    if (copy === undefined || switchedOff.get(copy) !== note) {
      copy = { ...definition, frontmatter: { ...definition.frontmatter, enabled: false } };
      switchedOff.set(copy, note);
      copies.set(definition, copy);
    }
    return copy;
  };
  const listeners = new Set<() => void>();
  const stopSwitches = switches.onChange(() => {
    generation += 1;
    for (const listener of listeners) listener();
  });
  const stopSource = source.onChange(() => {
    for (const listener of listeners) listener();
  });
  return {
    switches,
    snapshot() {
      const inner = source.snapshot();
      if (cached?.inner === inner && cached.generation === generation) return cached.outer;
      const outer: DefinitionSnapshot = {
        agents: inner.agents.map((status): AgentStatus =>
          status.definition === undefined ? status : { ...status, definition: switched(status.definition) },
        ),
        presets: inner.presets,
        get: (id) => {
          const definition = inner.get(id);
          return definition === undefined ? undefined : switched(definition);
        },
      };
      cached = { inner, generation, outer };
      return outer;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      stopSwitches();
      stopSource();
      await switches.close();
      await source.close();
    },
  };
}
