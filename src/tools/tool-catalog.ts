import type { ToolDefinition } from "./tool-definition.js";

/** Where the executor finds a tool by the name an agent lists: built-ins, then MCP servers. */
export interface ToolCatalog {
  /**
   * The tool, or undefined when no built-in or MCP server offers it. May start an MCP server;
   * `signal` (the run's) ends the wait, and a start no other run waits for.
   */
  find(name: string, signal?: AbortSignal): Promise<ToolDefinition | undefined>;
  /** The built-in tool of this name, at once (no source is asked); undefined for any other name. */
  builtin?(name: string): ToolDefinition | undefined;
  /**
   * The tools an agent's `tools` list names, in its order. An entry such as `mcp:<server>/*`
   * expands to every tool of that server. Names that resolve to nothing are returned in `missing`.
   */
  expand(
    names: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ tools: ToolDefinition[]; missing: string[] }>;
}

/** A source of tools by name prefix (the MCP manager for `mcp:`). */
export interface ToolSource {
  /** Whether names of this form belong to this source. */
  owns(name: string): boolean;
  find(name: string, signal?: AbortSignal): Promise<ToolDefinition | undefined>;
  expand(name: string, signal?: AbortSignal): Promise<ToolDefinition[]>;
}

/** The built-in tools by name, and any number of other sources (MCP) for the names they own. */
export class CompositeToolCatalog implements ToolCatalog {
  readonly #builtins: Map<string, ToolDefinition>;
  readonly #sources: readonly ToolSource[];

  constructor(builtins: readonly ToolDefinition[], sources: readonly ToolSource[] = []) {
    this.#builtins = new Map(builtins.map((tool) => [tool.name, tool]));
    this.#sources = sources;
  }

  builtin(name: string): ToolDefinition | undefined {
    return this.#builtins.get(name);
  }

  async find(name: string, signal?: AbortSignal): Promise<ToolDefinition | undefined> {
    const builtin = this.#builtins.get(name);
    if (builtin) return builtin;
    const source = this.#sources.find((candidate) => candidate.owns(name));
    return source ? source.find(name, signal) : undefined;
  }

  async expand(
    names: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ tools: ToolDefinition[]; missing: string[] }> {
    const tools: ToolDefinition[] = [];
    const missing: string[] = [];
    const seen = new Set<string>();
    const add = (tool: ToolDefinition) => {
      if (seen.has(tool.name)) return;
      seen.add(tool.name);
      tools.push(tool);
    };
    for (const name of names) {
      const builtin = this.#builtins.get(name);
      if (builtin) {
        add(builtin);
        continue;
      }
      const source = this.#sources.find((candidate) => candidate.owns(name));
      const found = source ? await source.expand(name, signal) : [];
      if (found.length === 0) missing.push(name);
      found.forEach(add);
    }
    return { tools, missing };
  }
}
