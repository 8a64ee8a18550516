import type { ChatTool } from "../../llm/chat-message.js";
import type { ToolSpec } from "../../tools/tool-executor.js";
import type { ToolFailures } from "./tool-failures.js";

/**
 * The tools a run offers the model: its specs without those removed after repeated failures. Built
 * again only when a tool was removed (tools are removed, never given back, within a run), not on
 * every round.
 */
export class OfferedTools {
  readonly #specs: readonly ToolSpec[];
  readonly #failures: ToolFailures;
  #tools: readonly ChatTool[] = [];
  /** How many tools were removed when `#tools` was built; -1 before the first build. */
  #builtWithRemoved = -1;

  constructor(specs: readonly ToolSpec[], failures: ToolFailures) {
    this.#specs = specs;
    this.#failures = failures;
  }

  current(): readonly ChatTool[] {
    const removed = this.#failures.disabled.size;
    if (removed !== this.#builtWithRemoved) {
      this.#builtWithRemoved = removed;
      this.#tools = this.#specs
        .filter((spec) => !this.#failures.isDisabled(spec.name))
        .map((spec) => ({
          type: "function",
          function: { name: spec.name, description: spec.description, parameters: spec.parameters },
        }));
    }
    return this.#tools;
  }
}
