import type { RunSpending } from "../../tools/tool-executor.js";

/**
 * One of `parts` sub-agent calls started side by side: each child's limits are cut to what its
 * parent has left, so each gets an equal part of what was left when they started, not all of it.
 * Otherwise N calls in one answer could each spend the whole remaining budget, N times the limit
 * between them (and N^depth through their own children). Their bills go to the run as they come.
 */
export function budgetShare(budget: RunSpending, parts: number): RunSpending {
  const left = budget.remaining();
  const share = { tokens: left.tokens / parts, costUsd: left.costUsd / parts };
  return {
    remaining: () => share,
    add: (usage, costUsd, options) => budget.add(usage, costUsd, options),
  };
}
