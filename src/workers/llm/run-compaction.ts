import type { Config } from "../../config/config-schema.js";
import { AgentdError, toAgentdError } from "../../errors/agentd-error.js";
import type { ChatMessage } from "../../llm/chat-message.js";
import type { ModelProvider } from "../../llm/model-client.js";
import type { RunContext } from "../worker.js";
import { compactHistory } from "./compact-history.js";
import { SUMMARY_INSTRUCTIONS } from "./guard-messages.js";
import type { RunBudget } from "./run-budget.js";
import type { HistoryTokens } from "./history-tokens.js";
import type { RunEvents } from "./run-events.js";

export interface RunCompactionParts {
  model: ModelProvider;
  context: RunContext;
  budget: RunBudget;
  events: RunEvents;
  settings: Config["llm"]["context"];
  /** The history's estimated tokens, kept as it grows. */
  tokens: HistoryTokens;
}

/**
 * Compacts the run's history when it passed config `llm.context.max_tokens`: the summary is a
 * separate model call (counted in the run's budget); when it fails the middle is dropped. Publishes
 * a `compaction` event either way. Returns the history unchanged when within budget.
 */
export async function compactRunHistory(
  messages: ChatMessage[],
  parts: RunCompactionParts,
): Promise<ChatMessage[]> {
  const { model, context, budget, events, settings, tokens } = parts;
  const summarize = async (transcript: string) => {
    const response = await model.complete(
      {
        model: context.definition.model,
        messages: [
          { role: "system", content: SUMMARY_INSTRUCTIONS },
          { role: "user", content: transcript },
        ],
      },
      {
        signal: context.control.signal,
        cutOff: budget.cutOff(),
        onSpent: (spent) => budget.recordCutOff(spent),
      },
    );
    budget.record(response.usage, response.costUsd);
    if (!response.text.trim()) throw new AgentdError("LLM_BAD_RESPONSE", "the summary call returned no text");
    return response.text;
  };
  const compaction = await compactHistory(
    messages,
    { maxTokens: settings.max_tokens, keepRecent: settings.keep_recent },
    summarize,
    context.control.signal,
    tokens.of(messages),
  );
  if (!compaction) return messages;
  events.publish("compaction", {
    method: compaction.method,
    messages_before: compaction.messagesBefore,
    messages_after: compaction.messagesAfter,
    tokens_before: compaction.tokensBefore,
    tokens_after: compaction.tokensAfter,
  });
  if (compaction.summaryError !== undefined) {
    const error = toAgentdError(compaction.summaryError, "LLM_BAD_RESPONSE");
    events.publish("warning", {
      code: error.code,
      message: `the summary for compaction failed (${error.message}); older messages were dropped instead`,
    });
  }
  return compaction.messages;
}
