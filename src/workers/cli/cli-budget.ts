import { costOf, type PriceTable } from "../../llm/price-table.js";
import type { CliTranscript } from "./cli-transcript.js";
import type { CliRules } from "./cli-rules.js";

/**
 * agentd's own check of a CLI run's `max_tokens` and `max_cost_usd`, from the usage and cost the
 * tool streams: the cost it reports (Claude Code), else its tokens priced with `llm.prices` for the
 * CLI's model. Returns why the run is over budget, or undefined.
 */
export function budgetCrossed(
  transcript: CliTranscript,
  rules: CliRules,
  prices: PriceTable,
  model: string | undefined,
): string | undefined {
  const tokens = transcript.usage.total_tokens;
  if (tokens > rules.maxTokens) return `the CLI used ${tokens} tokens, its limit is ${rules.maxTokens}`;
  const cost = cliCost(transcript, prices, model);
  if (cost > rules.maxCostUsd) return `the CLI cost $${cost.toFixed(6)}, its limit is $${rules.maxCostUsd}`;
  return undefined;
}

/** What the run cost: the tool's own figure when it gives one, else its tokens at `llm.prices`. */
export function cliCost(transcript: CliTranscript, prices: PriceTable, model: string | undefined): number {
  if (transcript.costUsd > 0) return transcript.costUsd;
  return model === undefined ? 0 : costOf(prices, model, transcript.usage);
}
