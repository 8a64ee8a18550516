import type { Config } from "../../config/config-schema.js";
import type { ChatMessage, ChatTool, ModelResponse } from "../../llm/chat-message.js";
import type { ModelProvider } from "../../llm/model-client.js";
import type { RunContext } from "../worker.js";
import type { RunBudget } from "./run-budget.js";
import type { RunEvents } from "./run-events.js";

export interface ModelCallParts {
  model: ModelProvider;
  context: RunContext;
  budget: RunBudget;
  events: RunEvents;
  llm: Pick<Config["llm"], "temperature">;
}

/**
 * One round's model call for a run: the agent's model, fallback models and temperature, the run's
 * signal, the budget cut-off, and `error`/`fallback` events for retries and model changes.
 */
export function callModel(
  messages: ChatMessage[],
  tools: readonly ChatTool[],
  parts: ModelCallParts,
  promptTokens?: number,
): Promise<ModelResponse> {
  const { model, context, budget, events } = parts;
  const { definition } = context;
  const temperature = definition.frontmatter.temperature ?? parts.llm.temperature;
  return model.complete(
    {
      model: definition.model,
      messages,
      tools,
      ...(temperature === undefined ? {} : { temperature }),
      ...(promptTokens === undefined ? {} : { promptTokens }),
    },
    {
      signal: context.control.signal,
      fallbackModels: definition.frontmatter.fallback_models,
      cutOff: budget.cutOff(),
      onSpent: (spent) => budget.recordCutOff(spent),
      onRetry: ({ error, attempt, delayMilliseconds }) =>
        events.publish("error", {
          code: error.code,
          message: `${error.message} (attempt ${attempt}; retrying in ${Math.round(delayMilliseconds)} ms)`,
          retryable: true,
        }),
      onFallback: (from, to, error) =>
        events.publish("fallback", {
          from,
          to,
          reason: error.code,
          message: `${from} kept failing (${error.message}); trying ${to}`,
        }),
    },
  );
}
