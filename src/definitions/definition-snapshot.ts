import type { AgentdError } from "../errors/agentd-error.js";
import type { AgentDefinition } from "./agent-definition.js";

/** The state of one agent file. Two files with one id give two statuses, both invalid. */
export interface AgentStatus {
  id: string;
  /** Absolute path. */
  file: string;
  valid: boolean;
  errors: AgentdError[];
  warnings: string[];
  /** The valid definition, or the last valid one when the file is now invalid. */
  definition?: AgentDefinition;
}

/** The state of one preset file. */
export interface PresetStatus {
  name: string;
  /** Absolute path. */
  file: string;
  valid: boolean;
  errors: AgentdError[];
}

/** Every agent and preset at one moment. Immutable: a later reload makes a new snapshot. */
export interface DefinitionSnapshot {
  /** Sorted by id, then file. */
  agents: AgentStatus[];
  /** Sorted by name, then file. */
  presets: PresetStatus[];
  /** The definition serving `id`: valid now, or the last valid one while the file is invalid. */
  get(id: string): AgentDefinition | undefined;
}

/** Freezes statuses into a snapshot. `serving` maps an id to the definition runs should use. */
export function createSnapshot(
  agents: Iterable<AgentStatus>,
  presets: Iterable<PresetStatus>,
  serving: ReadonlyMap<string, AgentDefinition>,
): DefinitionSnapshot {
  const servingCopy = new Map(serving);
  return {
    agents: [...agents].sort((left, right) => compare(left.id, right.id) || compare(left.file, right.file)),
    presets: [...presets].sort(
      (left, right) => compare(left.name, right.name) || compare(left.file, right.file),
    ),
    get: (id) => servingCopy.get(id),
  };
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
