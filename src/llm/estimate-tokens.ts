import type { ChatMessage } from "./chat-message.js";

/** Rough characters per token of English text and code; good enough for budgets and compaction. */
const CHARACTERS_PER_TOKEN = 4;
/** Role, separators and framing the API adds to every message. */
const TOKENS_PER_MESSAGE = 4;

/** Estimated tokens of a text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARACTERS_PER_TOKEN);
}

/** Estimated tokens of one message, tool calls included. */
export function estimateMessageTokens(message: ChatMessage): number {
  let characters = message.content?.length ?? 0;
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? []) {
      characters += call.function.name.length + call.function.arguments.length + call.id.length;
    }
  }
  return TOKENS_PER_MESSAGE + Math.ceil(characters / CHARACTERS_PER_TOKEN);
}

/** Estimated prompt tokens of a whole conversation. */
export function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}
