import type { CutOffSpending } from "./cut-off-spending.js";
import { type CallSite, type LlmError, llmError } from "./llm-error.js";

/**
 * The most characters (text and tool-call arguments together) one model answer may stream: 4 Mi,
 * some eight times what a model with a 128k-token output limit can write. Past it the answer is
 * not a model's but a broken or hostile server's, and keeping on reading it would cost the daemon
 * its memory (a 50 MB answer held 780 MB) whatever `limits.max_tokens` allows.
 */
export const MAX_ANSWER_CHARACTERS = 4 * 1024 * 1024;

/**
 * The error that ends a call whose answer passed `MAX_ANSWER_CHARACTERS`: tried on no retry, only
 * on fallback models. It carries what the call spent up to the cut (estimated): the provider bills
 * it, so the run counts it.
 */
export function answerTooLarge(characters: number, site: CallSite, spent: CutOffSpending): LlmError {
  return llmError(
    "LLM_BAD_RESPONSE",
    `${site.model} at ${site.endpoint} streamed an answer of more than ` +
      `${MAX_ANSWER_CHARACTERS.toLocaleString("en-US")} characters (${characters.toLocaleString("en-US")} so far): ` +
      "the call was cut off there",
    site,
    {
      retryable: false,
      details: { spent: { usage: spent.usage, cost_usd: spent.costUsd } },
      hint: "no model writes that much in one answer: check the model server (a loop, a broken proxy); a task that needs more output must ask for it in parts (docs/runs.md)",
    },
  );
}
