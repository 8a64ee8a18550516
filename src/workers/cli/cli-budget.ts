import { estimateTextTokens } from "../../llm/estimate-tokens.js";
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

/** Below a millionth of a dollar, a cost budget cut by a parent is spent (sums of prices round). */
const NOTHING_LEFT_USD = 0.000_001;

/**
 * Why the run cannot afford to start the CLI at all, or undefined: the prompt agentd hands the
 * tool (its task and system prompt, estimated) alone passes what the budget leaves (a sub-agent
 * given a sliver of its parent's), or its cost budget was cut to nothing (`ownCostLimit`, the
 * agent's own `max_cost_usd`, is not 0). A CLI reports its usage only after the fact, so once
 * started it can spend past the budget before agentd stops it: this is checked before.
 */
export function unaffordableStart(
  prompt: string,
  rules: CliRules,
  ownCostLimit: number,
  prices: PriceTable,
  model: string | undefined,
): string | undefined {
  if (rules.maxCostUsd < NOTHING_LEFT_USD && ownCostLimit > 0)
    return "not started: nothing is left of the cost budget ($0 of max_cost_usd)";
  const tokens = estimateTextTokens(prompt);
  if (tokens > rules.maxTokens)
    return `not started: its prompt alone is about ${tokens} tokens, the run may spend ${rules.maxTokens}`;
  const usage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
  const cost = model === undefined ? 0 : costOf(prices, model, usage);
  if (cost > rules.maxCostUsd)
    return `not started: its prompt alone costs about $${cost.toFixed(6)}, the run may spend $${rules.maxCostUsd}`;
  return undefined;
}
