import { type Span, SpanKind } from "@opentelemetry/api";
import type { ChatMessage, ModelResponse } from "../llm/chat-message.js";
import type { CompleteOptions, ModelProvider } from "../llm/model-client.js";
import * as names from "./genai-attributes.js";
import { type MaskedContent, partsOf } from "./masked-content.js";
import { failed } from "./run-traces.js";
import { SpanNames } from "./span-names.js";
import { scopeOfSignal } from "./trace-scope.js";

export interface TracedModelOptions {
  /** The endpoint's base URL: `server.address` and `server.port` of each call. */
  endpoint?: string | undefined;
  /** Messages and the answer in spans (masked at export). */
  content: boolean;
}

/**
 * The model with a `chat <model>` span per call (retries inside it are its `agentd.retry` events,
 * a fallback model its `agentd.fallback` event): under the run's span, or untraced outside a run.
 */
export function tracedModel(model: ModelProvider, options: TracedModelOptions): ModelProvider {
  const server = serverOf(options.endpoint);
  const spanNames = new SpanNames(names.OPERATION_CHAT);
  return {
    async complete(request, completeOptions) {
      const scope = scopeOfSignal(completeOptions.signal);
      if (scope === undefined) return model.complete(request, completeOptions);
      const span = scope.tracer.startSpan(
        spanNames.of(request.model),
        { kind: SpanKind.CLIENT },
        scope.context,
      );
      // Set on the span one by one, not handed to startSpan: the SDK copies and checks a start's
      // attributes object twice before the span checks each one again (no sampler reads them).
      span.setAttribute(names.GEN_AI_OPERATION_NAME, names.OPERATION_CHAT);
      span.setAttribute(names.GEN_AI_PROVIDER_NAME, "openai");
      span.setAttribute(names.GEN_AI_REQUEST_MODEL, request.model);
      if (request.temperature !== undefined)
        span.setAttribute(names.GEN_AI_REQUEST_TEMPERATURE, request.temperature);
      if (scope.runId !== undefined) span.setAttribute(names.GEN_AI_CONVERSATION_ID, scope.runId);
      if (server !== undefined) {
        span.setAttribute(names.SERVER_ADDRESS, server.address);
        span.setAttribute(names.SERVER_PORT, server.port);
      }
      if (options.content) recordInput(span, request.messages, scope.content);
      const traced: CompleteOptions = {
        ...completeOptions,
        onRetry: (notice) => {
          span.addEvent("agentd.retry", {
            [names.ERROR_TYPE]: notice.error.code,
            "agentd.retry.attempt": notice.attempt,
            "agentd.retry.delay_ms": Math.round(notice.delayMilliseconds),
            [names.GEN_AI_REQUEST_MODEL]: notice.model,
          });
          completeOptions.onRetry?.(notice);
        },
        onFallback: (from, to, error) => {
          span.addEvent("agentd.fallback", {
            "agentd.fallback.from": from,
            "agentd.fallback.to": to,
            [names.ERROR_TYPE]: error.code,
          });
          completeOptions.onFallback?.(from, to, error);
        },
      };
      try {
        const response = await model.complete(request, traced);
        describeResponse(span, response, options.content);
        return response;
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  };
}

/**
 * The conversation sent (`gen_ai.input.messages`): masked message by message where the run's
 * content is (each message once per run); whole at export otherwise.
 */
function recordInput(span: Span, messages: readonly ChatMessage[], content: MaskedContent | undefined): void {
  if (!span.isRecording()) return;
  if (content === undefined) {
    span.setAttribute(names.GEN_AI_INPUT_MESSAGES, JSON.stringify(messages.map(partsOf)));
    return;
  }
  const masked = content.inputMessages(messages);
  span.setAttribute(names.GEN_AI_INPUT_MESSAGES, masked);
  content.markMasked(span, names.GEN_AI_INPUT_MESSAGES, masked);
}

function describeResponse(span: Span, response: ModelResponse, content: boolean): void {
  // One by one, as at the start: no object made for the SDK to walk with a check per key.
  span.setAttribute(names.GEN_AI_RESPONSE_MODEL, response.model);
  span.setAttribute(names.GEN_AI_RESPONSE_FINISH_REASONS, [response.finishReason]);
  span.setAttribute(names.GEN_AI_USAGE_INPUT_TOKENS, response.usage.prompt_tokens);
  span.setAttribute(names.GEN_AI_USAGE_OUTPUT_TOKENS, response.usage.completion_tokens);
  span.setAttribute(names.AGENTD_COST_USD, response.costUsd);
  if (content) {
    const message: ChatMessage = {
      role: "assistant",
      content: response.text,
      ...(response.toolCalls.length > 0 ? { tool_calls: response.toolCalls } : {}),
    };
    span.setAttribute(
      names.GEN_AI_OUTPUT_MESSAGES,
      JSON.stringify([{ ...partsOf(message), finish_reason: response.finishReason }]),
    );
  }
}

function serverOf(endpoint: string | undefined): { address: string; port: number } | undefined {
  if (endpoint === undefined) return undefined;
  try {
    const url = new URL(endpoint);
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
    return { address: url.hostname, port };
  } catch {
    return undefined;
  }
}
