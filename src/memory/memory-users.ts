import type { AgentDefinition } from "../definitions/agent-definition.js";
import { memorySettingsOf } from "./agent-memory.js";
import { type MemoryKey, memoryKeyOf, memoryKeyText } from "./memory-key.js";

/** The agents loaded, as the definitions' snapshot serves them (its invalid ones included). */
export interface MemoryAgents {
  readonly agents: ReadonlyArray<{ id: string; definition?: AgentDefinition | undefined }>;
  get(id: string): AgentDefinition | undefined;
}

/**
 * The ids of the agents whose memory `key` is (`memory:` other than `none`); an agent's own memory
 * that no loaded agent uses is told to that agent's log still, a shared one to none.
 */
export function agentsUsingMemory(snapshot: MemoryAgents, key: MemoryKey): string[] {
  const wanted = memoryKeyText(key);
  const users = snapshot.agents.flatMap((status) => {
    const definition = snapshot.get(status.id) ?? status.definition;
    if (definition === undefined) return [];
    const settings = memorySettingsOf(definition);
    return settings.mode !== "none" && memoryKeyText(memoryKeyOf(definition.id, settings)) === wanted
      ? [definition.id]
      : [];
  });
  return users.length > 0 ? users : key.kind === "agent" ? [key.agent] : [];
}
