import { z } from "zod";
import { AgentdError } from "../errors/agentd-error.js";
import type { ToolSource } from "../tools/tool-catalog.js";
import { defineTool, type ToolContext, type ToolDefinition } from "../tools/tool-definition.js";
import { addEntry, removePassage, replacePassage } from "./memory-edits.js";
import { memoryKeyOf } from "./memory-key.js";
import type { MemoryService, MemoryToolEdit } from "./memory-service.js";
import { memorySettingsOf } from "./agent-memory.js";

const AddSchema = z.strictObject({
  text: z.string().describe("A note for your later runs: one fact, decision or open item, in a few lines"),
});
const ReplaceSchema = z.strictObject({
  old: z.string().describe("The passage of your memory to change, quoted exactly"),
  new: z.string().describe("What replaces it"),
});
const RemoveSchema = z.strictObject({
  text: z.string().describe("The passage of your memory to take out, quoted exactly"),
});

/**
 * `memory_add`, `memory_replace` and `memory_remove`: an agent with `memory: write` curates its
 * memory (its own or its scope's) through them, never through files. Declaring `memory: write`
 * allows them; an `ask` or `deny` rule naming them (`memory_add(*deploy*)`) still applies.
 */
export class MemoryTools implements ToolSource {
  readonly #memories: MemoryService;
  readonly #tools: Map<string, ToolDefinition>;

  constructor(memories: MemoryService) {
    this.#memories = memories;
    const tools: ToolDefinition[] = [
      defineTool({
        name: "memory_add",
        description:
          "Add a note to your memory, which your later runs see in their instructions. Keep notes short and durable; never store secrets",
        schema: AddSchema,
        subject: ({ text }) => ({ kind: "texts", texts: [text] }),
        run: ({ text }, context) =>
          this.#apply(context, text, {
            change: { operation: "add", text },
            edit: (content) => addEntry(content, text),
          }),
      }),
      defineTool({
        name: "memory_replace",
        description:
          "Replace a passage of your memory (quoted exactly) with new text: to correct, update or merge notes",
        schema: ReplaceSchema,
        subject: (value) => ({ kind: "texts", texts: [value.old, value.new] }),
        run: (value, context) =>
          this.#apply(context, value.new, {
            change: { operation: "replace", old: value.old, new: value.new },
            edit: (content) => replacePassage(content, value.old, value.new),
          }),
      }),
      defineTool({
        name: "memory_remove",
        description: "Remove a passage (quoted exactly) from your memory: what is stale or no longer matters",
        schema: RemoveSchema,
        subject: ({ text }) => ({ kind: "texts", texts: [text] }),
        run: ({ text }, context) =>
          this.#apply(context, "", {
            change: { operation: "remove", text },
            edit: (content) => removePassage(content, text),
          }),
      }),
    ];
    this.#tools = new Map(tools.map((tool) => [tool.name, { ...tool, allowedWhenUnlisted: true }]));
  }

  owns(name: string): boolean {
    return this.#tools.has(name);
  }

  async find(name: string): Promise<ToolDefinition | undefined> {
    return this.#tools.get(name);
  }

  async expand(name: string): Promise<ToolDefinition[]> {
    const tool = this.#tools.get(name);
    return tool ? [tool] : [];
  }

  async #apply(context: ToolContext, written: string, edit: Omit<MemoryToolEdit, "maxChars">) {
    const scope = context.run;
    if (!scope) throw new AgentdError("TOOL_FAILED", "the memory tools can only be used in a run");
    const settings = memorySettingsOf(scope.definition);
    if (settings.mode !== "write") {
      throw new AgentdError(
        "TOOL_DENIED",
        "this agent may not write its memory (memory: write is not declared)",
      );
    }
    if (written.trim().length > settings.max_entry_chars) {
      throw new AgentdError(
        "TOOL_BAD_ARGUMENTS",
        `a memory entry holds at most ${settings.max_entry_chars} characters (this one has ${written.trim().length}): keep the note short`,
      );
    }
    const key = memoryKeyOf(scope.definition.id, settings);
    const result = await this.#memories.edit(
      key,
      { ...edit, maxChars: settings.max_chars },
      { agents: [scope.definition.id], run: scope.runId, events: scope.events, by: "agent" },
      context.signal,
    );
    const size = `${result.content.length} of ${settings.max_chars} characters`;
    return {
      ok: true,
      output: result.unchanged ? `already in your memory (${size})` : `memory updated (${size})`,
    };
  }
}
