import type { Limits } from "../../config/config-schema.js";
import { AgentdError } from "../../errors/agentd-error.js";
import type { CutOffCheck } from "../../llm/stream-completion.js";
import type { CutOffSpending } from "../../llm/cut-off-spending.js";
import { EMPTY_USAGE, type Usage, addUsage } from "../../run-vocabulary/run-status.js";
import type { RunSpending } from "../../tools/tool-executor.js";

/**
 * One run's spending against its limits: rounds, tokens and cost. `check()` is the pre-flight
 * before each model call; `cutOff()` stops a call whose running estimate crosses what is left.
 */
export class RunBudget implements RunSpending {
  readonly #limits: Limits;
  readonly #onRecord: ((usage: Usage, costUsd: number) => void) | undefined;
  iterations = 0;
  usage: Usage = EMPTY_USAGE;
  costUsd = 0;
  /** Set when a sub-agent ran out of the budget it inherited from this run. */
  #exhaustedBy: string | undefined;

  /** `onRecord` hears each call's usage as it is added (the run record keeps it as it accrues). */
  constructor(limits: Limits, onRecord?: (usage: Usage, costUsd: number) => void) {
    this.#limits = limits;
    this.#onRecord = onRecord;
  }

  /** Adds one model call's usage and cost (summaries included). */
  record(usage: Usage, costUsd: number): void {
    this.usage = addUsage(this.usage, usage);
    this.costUsd += costUsd;
    this.#onRecord?.(usage, costUsd);
  }

  /**
   * Starts a resumed run from what its checkpoint had spent. Not told to `onRecord`: the run's
   * record carries that spending already (kept from before the cut, or taken from the checkpoint
   * by crash recovery), and counting it again would double it.
   */
  restore(usage: Usage, costUsd: number): void {
    this.usage = addUsage(this.usage, usage);
    this.costUsd += costUsd;
  }

  /**
   * Adds what a call cut off mid-stream had spent (by a budget, or past the answer size cap): the
   * model client's `onSpent`.
   */
  recordCutOff(spent: CutOffSpending): void {
    this.record(spent.usage, spent.costUsd);
  }

  remaining(): { tokens: number; costUsd: number } {
    return {
      tokens: Math.max(0, this.#limits.max_tokens - this.usage.total_tokens),
      costUsd: Math.max(0, this.#limits.max_cost_usd - this.costUsd),
    };
  }

  /** A sub-agent's spending counts toward this run's budgets. */
  add(usage: Usage, costUsd: number, options: { exhausted?: boolean } = {}): void {
    this.record(usage, costUsd);
    if (options.exhausted) this.#exhaustedBy = "a sub-agent used up what was left of the run's budget";
  }

  /** Throws MAX_ITERATIONS or BUDGET_EXCEEDED when no further model call is allowed. */
  check(): void {
    const { max_iterations, max_tokens, max_cost_usd } = this.#limits;
    if (this.iterations >= max_iterations) {
      throw new AgentdError("MAX_ITERATIONS", `the run used all ${max_iterations} of its iterations`, {
        hint: "raise limits.max_iterations or give the agent a narrower task",
        details: { max_iterations },
      });
    }
    if (this.usage.total_tokens >= max_tokens) throw this.#tokensExceeded(this.usage.total_tokens);
    if (this.costUsd >= max_cost_usd) throw this.#costExceeded(this.costUsd);
    if (this.#exhaustedBy !== undefined) {
      throw new AgentdError("BUDGET_EXCEEDED", this.#exhaustedBy, {
        hint: "raise limits.max_tokens or limits.max_cost_usd of the agent that started the sub-agent",
        details: { limit: "sub_agent", used: this.usage.total_tokens },
      });
    }
  }

  /** The check run after each streamed chunk: the call's estimate on top of what was spent. */
  cutOff(): CutOffCheck {
    const { max_tokens, max_cost_usd } = this.#limits;
    return (progress) => {
      const tokens = this.usage.total_tokens + progress.promptTokens + progress.completionTokens;
      if (tokens > max_tokens) return `about ${tokens} tokens would pass limits.max_tokens (${max_tokens})`;
      const cost = this.costUsd + progress.costUsd;
      if (cost > max_cost_usd)
        return `about $${cost.toFixed(4)} would pass limits.max_cost_usd ($${max_cost_usd})`;
      return undefined;
    };
  }

  #tokensExceeded(tokens: number): AgentdError {
    return new AgentdError(
      "BUDGET_EXCEEDED",
      `the run used ${tokens} tokens, its limit is ${this.#limits.max_tokens}`,
      {
        hint: "raise limits.max_tokens of the agent",
        details: { limit: "max_tokens", used: tokens },
      },
    );
  }

  #costExceeded(cost: number): AgentdError {
    const limit = this.#limits.max_cost_usd;
    return new AgentdError("BUDGET_EXCEEDED", `the run cost $${cost.toFixed(4)}, its limit is $${limit}`, {
      hint: "raise limits.max_cost_usd of the agent",
      details: { limit: "max_cost_usd", used: cost },
    });
  }
}
