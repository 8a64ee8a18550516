import type { Usage } from "../run-vocabulary/run-status.js";

/** A tool call as the model wrote it, in the OpenAI wire shape. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * One message of a conversation, in the OpenAI wire shape (so the history goes to the SDK as it
 * is), narrowed to what agentd writes: text content only.
 */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** A function the model may call: an OpenAI tool definition. */
export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "function_call";

/** One model answer, assembled from the stream. */
export interface ModelResponse {
  text: string;
  toolCalls: ChatToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /** False when the server sent no usage and it was estimated from the text sizes. */
  usageReported: boolean;
  costUsd: number;
  /** The model that answered (a fallback model when the first one kept failing). */
  model: string;
}
