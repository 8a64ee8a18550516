/** Consecutive failures after which a tool is removed for the rest of the run. */
export const TOOL_FAILURE_LIMIT = 3;

/**
 * Codes of a call refused by policy rather than failed: a permission denied, an approval denied or
 * expired, a secret the agent may not use, arguments the model must correct, a tool it was not
 * given. The tool did nothing wrong, so such a refusal neither counts toward removing it nor resets
 * its count; the loop detector still ends a run that keeps asking for the same refused thing.
 */
export const POLICY_REFUSAL_CODES: ReadonlySet<string> = new Set([
  "TOOL_DENIED",
  "TOOL_BAD_ARGUMENTS",
  "TOOL_NOT_FOUND",
  "SECRET_NOT_ALLOWED",
]);

/** The outcome of one call, as far as failure counting cares. */
export interface CallOutcome {
  ok: boolean;
  code?: string;
}

/**
 * Counts each tool's consecutive failures in one run; a tool reaching the limit is disabled for
 * the rest of the run. A success resets the tool's count; a refusal by policy leaves it as it is.
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

  /** Continues from a checkpoint: these tools stay removed. */
  restoreDisabled(tools: readonly string[]): void {
    for (const tool of tools) this.#disabled.add(tool);
  }

  /** Records one result; returns true when this failure just disabled the tool. */
  record(tool: string, outcome: CallOutcome): boolean {
    if (outcome.ok) {
      this.#consecutive.delete(tool);
      return false;
    }
    if (outcome.code !== undefined && POLICY_REFUSAL_CODES.has(outcome.code)) return false;
    const count = (this.#consecutive.get(tool) ?? 0) + 1;
    this.#consecutive.set(tool, count);
    if (count < this.#limit || this.#disabled.has(tool)) return false;
    this.#disabled.add(tool);
    return true;
  }
}
