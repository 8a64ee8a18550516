import type { Config } from "../config/config-schema.js";
import type { Usage } from "../run-vocabulary/run-status.js";

export type PriceTable = Config["llm"]["prices"];

/** Cost in USD of `usage` on `model` from config `llm.prices` (USD per million tokens); unknown model = 0. */
export function costOf(prices: PriceTable, model: string, usage: Usage): number {
  const price = prices[model];
  if (!price) return 0;
  return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1_000_000;
}
