import type { ChatMessage } from "../../llm/chat-message.js";
import { estimateMessagesTokens } from "../../llm/estimate-tokens.js";

export interface CompactionSettings {
  /** Estimated tokens of history above which the middle is compacted (config llm.context.max_tokens). */
  maxTokens: number;
  /** Recent messages kept verbatim (config llm.context.keep_recent). */
  keepRecent: number;
}

/** Writes a summary of a transcript (a model call); throws when it cannot. */
export type Summarize = (transcript: string) => Promise<string>;

export interface Compaction {
  messages: ChatMessage[];
  method: "summary" | "truncation";
  messagesBefore: number;
  messagesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  /** Why the summary was not used, when the method is truncation. */
  summaryError?: unknown;
}

/** Longest part of one message that goes into the transcript given to the summarizer. */
const TRANSCRIPT_MESSAGE_CHARACTERS = 2_000;

/**
 * Shrinks a history that passed its token budget: the leading system prompt and the task (first
 * user message) stay whole, the last `keepRecent` messages stay verbatim, and the middle becomes
 * one summary message — or a note that it was dropped when the summary fails. A tool call and its
 * results are never split. Returns undefined when the history is within budget or has no middle.
 */
export async function compactHistory(
  messages: ChatMessage[],
  settings: CompactionSettings,
  summarize: Summarize,
  signal: AbortSignal,
  estimatedTokens?: number,
): Promise<Compaction | undefined> {
  const tokensBefore = estimatedTokens ?? estimateMessagesTokens(messages);
  if (tokensBefore <= settings.maxTokens) return undefined;
  const headEnd = headLength(messages);
  const tailStart = tailStartOf(messages, headEnd, settings.keepRecent);
  const middle = messages.slice(headEnd, tailStart);
  if (middle.length === 0) return undefined;

  const result = (method: Compaction["method"], bridge: ChatMessage, summaryError?: unknown): Compaction => {
    const compacted = [...messages.slice(0, headEnd), bridge, ...messages.slice(tailStart)];
    return {
      messages: compacted,
      method,
      messagesBefore: messages.length,
      messagesAfter: compacted.length,
      tokensBefore,
      tokensAfter: estimateMessagesTokens(compacted),
      ...(summaryError === undefined ? {} : { summaryError }),
    };
  };

  try {
    const summary = await summarize(renderTranscript(middle, settings.maxTokens * 4));
    const content = `Summary of the earlier part of this run (${middle.length} messages, compacted to fit the context):\n${summary}`;
    return result("summary", { role: "user", content });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const content = `[${middle.length} earlier messages of this run were removed to fit the context window.]`;
    return result("truncation", { role: "user", content }, error);
  }
}

/** Leading system messages plus the first user message (the task). */
function headLength(messages: readonly ChatMessage[]): number {
  let index = 0;
  while (messages[index]?.role === "system") index += 1;
  if (messages[index]?.role === "user") index += 1;
  return index;
}

/** Where the kept tail starts: `keepRecent` from the end, moved back so it never opens on a tool result. */
function tailStartOf(messages: readonly ChatMessage[], headEnd: number, keepRecent: number): number {
  let start = Math.max(headEnd, messages.length - keepRecent);
  while (start > headEnd && messages[start]?.role === "tool") start -= 1;
  return start;
}

/** The middle as plain text for the summarizer, newest part kept when it is too long. */
function renderTranscript(messages: readonly ChatMessage[], maxCharacters: number): string {
  const lines = messages.map((message) => {
    const text = clip(message.content ?? "");
    if (message.role === "tool") return `[tool result ${message.tool_call_id}] ${text}`;
    if (message.role === "assistant") {
      const calls = (message.tool_calls ?? []).map(
        (call) => `[called ${call.function.name}(${clip(call.function.arguments)}) as ${call.id}]`,
      );
      return [`[assistant] ${text}`, ...calls].join("\n");
    }
    return `[${message.role}] ${text}`;
  });
  const transcript = lines.join("\n");
  return transcript.length > maxCharacters ? transcript.slice(-maxCharacters) : transcript;
}

function clip(text: string): string {
  return text.length > TRANSCRIPT_MESSAGE_CHARACTERS
    ? `${text.slice(0, TRANSCRIPT_MESSAGE_CHARACTERS)}…`
    : text;
}
