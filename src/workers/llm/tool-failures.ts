/** Consecutive failures after which a tool is removed for the rest of the run. */
export const TOOL_FAILURE_LIMIT = 3;

/**
 * Counts each tool's consecutive failures in one run; a tool reaching the limit is disabled for
 * the rest of the run. A success resets the tool's count.
 */
export class ToolFailures {
  readonly #consecutive = new Map<string, number>();
  readonly #disabled = new Set<string>();
  readonly #limit: number;

  constructor(limit = TOOL_FAILURE_LIMIT) {
    this.#limit = limit;
  }

  isDisabled(tool: string): boolean {
    return this.#disabled.has(tool);
  }

  get disabled(): ReadonlySet<string> {
    return this.#disabled;
  }

  /** Records one result; returns true when this failure just disabled the tool. */
  record(tool: string, ok: boolean): boolean {
    if (ok) {
      this.#consecutive.delete(tool);
      return false;
    }
    const count = (this.#consecutive.get(tool) ?? 0) + 1;
    this.#consecutive.set(tool, count);
    if (count < this.#limit || this.#disabled.has(tool)) return false;
    this.#disabled.add(tool);
    return true;
  }
}
