import type { AgentDefinition } from "../definitions/agent-definition.js";
import { AgentdError } from "../errors/agentd-error.js";
import type { EventPublisher } from "../events/event-bus.js";
import { memorySettingsOf } from "./agent-memory.js";
import { type MemoryKey, memoryKeyOf, memoryKeyText } from "./memory-key.js";
import type { MemoryService } from "./memory-service.js";
import type { MemoryMode } from "./memory-settings.js";
import type { Actor } from "../events/actor.js";
import { type MemoryHistoryEntry, type MemoryHistorySource, memoryHistory } from "./memory-history.js";

/** A memory as operators see it (`GET /agents/:id/memory`, `GET /memories/:scope`). */
export interface MemoryView {
  /** `agent:<id>` or `shared:<scope>`. */
  memory: string;
  /** The whole text, vault values masked. */
  content: string;
  /** Give it back with a PUT: a PUT on another version is refused (409). */
  version: string;
  chars: number;
  /** The agents that use this memory, each with its mode. */
  agents: Array<{ id: string; mode: MemoryMode }>;
}

/** The agents loaded, as the definitions' snapshot serves them (its invalid ones included). */
export interface LoadedAgents {
  readonly agents: ReadonlyArray<{ id: string; definition?: AgentDefinition | undefined }>;
  get(id: string): AgentDefinition | undefined;
}

export interface MemoryOperatorsOptions {
  memories: MemoryService;
  snapshot: () => LoadedAgents;
  /** Where an operator's change is told (the daemon's bus). */
  events: EventPublisher;
  redact: (text: string) => string;
  /** The agents' event logs, where the history of a memory is read; absent: no history. */
  history?: MemoryHistorySource | undefined;
}

/** `GET /agents/:id/memory/history`: the changes, newest first. */
export interface MemoryHistoryView {
  memory: string;
  changes: MemoryHistoryEntry[];
  /** false when older changes may exist past what was read (see memoryHistory). */
  complete: boolean;
}

/**
 * What operators do with memories through the API, the CLI and the dashboard: read one whole, and
 * replace it by compare-and-set on its version. An agent's memory is the one it uses (its scope's
 * when it names one); an agent whose file was removed keeps its own memory readable.
 */
export class MemoryOperators {
  readonly #options: MemoryOperatorsOptions;

  constructor(options: MemoryOperatorsOptions) {
    this.#options = options;
  }

  ofAgent(agentId: string): Promise<MemoryView> {
    return this.#view(this.#agentKey(agentId));
  }

  ofScope(scope: string): Promise<MemoryView> {
    return this.#view({ kind: "shared", scope });
  }

  async setOfAgent(agentId: string, content: string, version: string, actor?: Actor): Promise<MemoryView> {
    return this.#set(this.#agentKey(agentId), content, version, actor);
  }

  async setOfScope(scope: string, content: string, version: string, actor?: Actor): Promise<MemoryView> {
    return this.#set({ kind: "shared", scope }, content, version, actor);
  }

  /** The changes of the memory the agent uses, newest first (at most `limit`). */
  historyOfAgent(agentId: string, limit: number): Promise<MemoryHistoryView> {
    return this.#history(this.#agentKey(agentId), limit);
  }

  historyOfScope(scope: string, limit: number): Promise<MemoryHistoryView> {
    return this.#history({ kind: "shared", scope }, limit);
  }

  async #history(key: MemoryKey, limit: number): Promise<MemoryHistoryView> {
    const memory = memoryKeyText(key);
    const source = this.#options.history;
    if (source === undefined) return { memory, changes: [], complete: false };
    const users = this.#users(key).map((user) => user.id);
    const agents = users.length > 0 ? users : key.kind === "agent" ? [key.agent] : [];
    return { memory, ...(await memoryHistory(memory, agents, source, limit)) };
  }

  async #set(key: MemoryKey, content: string, version: string, actor?: Actor): Promise<MemoryView> {
    const users = this.#users(key);
    await this.#options.memories.set(key, content, version, {
      // A shared memory no agent uses yet has no agent log to tell.
      agents: users.length > 0 ? users.map((user) => user.id) : key.kind === "agent" ? [key.agent] : [],
      run: null,
      events: this.#options.events,
      by: "operator",
      actor,
    });
    return this.#view(key);
  }

  #agentKey(agentId: string): MemoryKey {
    const snapshot = this.#options.snapshot();
    const status = snapshot.agents.find((agent) => agent.id === agentId);
    if (status === undefined) {
      throw new AgentdError("NOT_FOUND", `no agent "${agentId}"`, {
        field: "id",
        hint: "GET /agents lists every agent",
      });
    }
    const definition = snapshot.get(agentId) ?? status.definition;
    return memoryKeyOf(agentId, definition === undefined ? {} : memorySettingsOf(definition));
  }

  /** The agents whose memory this is, with their modes. */
  #users(key: MemoryKey): Array<{ id: string; mode: MemoryMode }> {
    const snapshot = this.#options.snapshot();
    return snapshot.agents.flatMap((status) => {
      const definition = snapshot.get(status.id) ?? status.definition;
      if (definition === undefined) return [];
      const settings = memorySettingsOf(definition);
      const own = memoryKeyText(memoryKeyOf(definition.id, settings)) === memoryKeyText(key);
      return own && settings.mode !== "none" ? [{ id: definition.id, mode: settings.mode }] : [];
    });
  }

  async #view(key: MemoryKey): Promise<MemoryView> {
    const memory = await this.#options.memories.read(key);
    return {
      memory: memoryKeyText(key),
      content: this.#options.redact(memory.content),
      version: memory.version,
      chars: memory.content.length,
      agents: this.#users(key),
    };
  }
}
