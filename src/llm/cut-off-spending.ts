import { AgentdError } from "../errors/agentd-error.js";
import type { Usage } from "../run-vocabulary/run-status.js";

/** What a model call cut off mid-stream had spent: the provider bills it, so the run counts it. */
export interface CutOffSpending {
  usage: Usage;
  costUsd: number;
}

/**
 * The spending an error of a call cut off mid-stream carries in its details (a BUDGET_EXCEEDED
 * cut-off, an answer past its size cap), or undefined for any other error.
 */
export function spentByCutOff(error: unknown): CutOffSpending | undefined {
  if (!(error instanceof AgentdError)) return undefined;
  const details = error.details as { spent?: { usage?: Usage; cost_usd?: number } } | undefined;
  const usage = details?.spent?.usage;
  if (!usage) return undefined;
  return { usage, costUsd: details?.spent?.cost_usd ?? 0 };
}
