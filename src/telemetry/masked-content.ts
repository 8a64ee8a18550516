import type { ChatMessage, ChatToolCall } from "../llm/chat-message.js";

/** A message's encoded and masked text, and what it was made from. */
interface EncodedMessage {
  readonly content: string | null;
  readonly toolCalls: readonly ChatToolCall[] | undefined;
  /** The vault's size when it was masked: a secret learned since means masking again. */
  readonly secretsKnown: number;
  readonly text: string;
}

/** A span attribute masked where it was recorded, and the vault's size then. */
interface MaskedAttribute {
  readonly key: string;
  readonly value: string;
  readonly secretsKnown: number;
}

/**
 * The conversation a chat span carries when content is on (`gen_ai.input.messages`), masked message
 * by message. Each model call's span holds the whole history so far: encoding and masking it whole
 * at every call (and masking it again at export) costs the square of the run's length. Here each
 * message is encoded and masked once, by its identity, and its text reused by every later call,
 * until the vault learns a secret (`secretsKnown` grows): then it is masked again. The span's
 * attribute is marked masked, so the exporter passes it on as it is; any other string it masks as
 * before, and this one too if the vault learned a secret before the export.
 */
export class MaskedContent {
  readonly #redact: (text: string) => string;
  readonly #secretsKnown: () => number;
  readonly #messages = new WeakMap<ChatMessage, EncodedMessage>();
  readonly #masked = new WeakMap<object, MaskedAttribute>();

  /**
   * @param redact the vault's masker
   * @param secretsKnown how many forms the vault knows: it only grows, and grows with each secret
   */
  constructor(redact: (text: string) => string, secretsKnown: () => number = () => 0) {
    this.#redact = redact;
    this.#secretsKnown = secretsKnown;
  }

  /** The messages in the conventions' shape as one JSON array, masked. */
  inputMessages(messages: readonly ChatMessage[]): string {
    const secretsKnown = this.#secretsKnown();
    return `[${messages.map((message) => this.#encoded(message, secretsKnown)).join(",")}]`;
  }

  /** Marks `value` (masked here) as what `span`'s attribute `key` holds. */
  markMasked(span: object, key: string, value: string): void {
    this.#masked.set(span, { key, value, secretsKnown: this.#secretsKnown() });
  }

  /**
   * Whether `span`'s attribute `key` still holds the value marked masked, and the vault has learned
   * nothing since: then it need not be masked again.
   */
  isMasked(span: object, key: string, value: unknown): boolean {
    const marked = this.#masked.get(span);
    return (
      marked !== undefined &&
      marked.key === key &&
      marked.value === value &&
      marked.secretsKnown === this.#secretsKnown()
    );
  }

  #encoded(message: ChatMessage, secretsKnown: number): string {
    const toolCalls = message.role === "assistant" ? message.tool_calls : undefined;
    const known = this.#messages.get(message);
    // The same object with the same content (a message is not edited in place, but if it were,
    // its new text is encoded again) and nothing learned since.
    if (
      known !== undefined &&
      known.content === message.content &&
      known.toolCalls === toolCalls &&
      known.secretsKnown === secretsKnown
    )
      return known.text;
    const text = this.#redact(JSON.stringify(partsOf(message)));
    this.#messages.set(message, { content: message.content, toolCalls, secretsKnown, text });
    return text;
  }
}

/** A message in the conventions' shape: `{ role, parts: [{ type: "text" | "tool_call" | "tool_call_response", … }] }`. */
export function partsOf(message: ChatMessage): { role: string; parts: Record<string, unknown>[] } {
  switch (message.role) {
    case "tool":
      return {
        role: "tool",
        parts: [{ type: "tool_call_response", id: message.tool_call_id, response: message.content }],
      };
    case "assistant":
      return {
        role: "assistant",
        parts: [
          ...(message.content ? [{ type: "text", content: message.content }] : []),
          ...(message.tool_calls ?? []).map((call) => ({
            type: "tool_call",
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          })),
        ],
      };
    default:
      return { role: message.role, parts: [{ type: "text", content: message.content }] };
  }
}
