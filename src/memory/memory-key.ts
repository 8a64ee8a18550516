import type { MemorySettings } from "./memory-settings.js";

/**
 * Which memory a file, a row or a request means: an agent's own (`agent`), or a shared memory that
 * every agent naming its scope uses (`shared`). The two never collide, whatever the names.
 */
export type MemoryKey = { kind: "agent"; agent: string } | { kind: "shared"; scope: string };

/** The memory an agent's settings point at: its scope's when it names one, else its own. */
export function memoryKeyOf(agentId: string, settings: Pick<MemorySettings, "scope">): MemoryKey {
  return settings.scope === undefined
    ? { kind: "agent", agent: agentId }
    : { kind: "shared", scope: settings.scope };
}

/** One string per memory: `agent:<id>` or `shared:<scope>` (a lock's or a row's key, an event's `memory`). */
export function memoryKeyText(key: MemoryKey): string {
  return key.kind === "agent" ? `agent:${key.agent}` : `shared:${key.scope}`;
}
