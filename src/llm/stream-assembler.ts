import type { Usage } from "../run-vocabulary/run-status.js";
import type { ChatChunk } from "./chat-chunk-schema.js";
import type { ChatToolCall, FinishReason } from "./chat-message.js";
import { type CallSite, llmError } from "./llm-error.js";

const FINISH_REASONS: ReadonlySet<string> = new Set([
  "stop",
  "tool_calls",
  "length",
  "content_filter",
  "function_call",
]);

interface PartialToolCall {
  id: string | undefined;
  name: string;
  argumentParts: string[];
}

/** What the stream has produced once it ended properly. */
export interface AssembledAnswer {
  text: string;
  toolCalls: ChatToolCall[];
  finishReason: FinishReason;
  usage: Usage | undefined;
}

/**
 * Builds one answer from streamed chunks: text deltas joined, tool calls assembled from deltas
 * split across chunks (keyed by index), the finish reason and the usage chunk. `finish()` refuses
 * a stream that ended before the model finished.
 */
export class StreamAssembler {
  readonly #site: CallSite;
  readonly #textParts: string[] = [];
  readonly #toolCalls = new Map<number, PartialToolCall>();
  #finishReason: string | undefined;
  #usage: Usage | undefined;
  #sawChoice = false;
  #characters = 0;

  constructor(site: CallSite) {
    this.#site = site;
  }

  /** Characters of text and tool arguments received so far: the running size of the answer. */
  get characters(): number {
    return this.#characters;
  }

  add(chunk: ChatChunk): void {
    if (chunk.usage) {
      const { prompt_tokens, completion_tokens } = chunk.usage;
      this.#usage = {
        prompt_tokens,
        completion_tokens,
        total_tokens: chunk.usage.total_tokens ?? prompt_tokens + completion_tokens,
      };
    }
    for (const choice of chunk.choices) {
      this.#sawChoice = true;
      if (choice.finish_reason) this.#finishReason = choice.finish_reason;
      const content = choice.delta?.content;
      if (content) {
        this.#textParts.push(content);
        this.#characters += content.length;
      }
      for (const delta of choice.delta?.tool_calls ?? []) this.#addToolCallDelta(delta);
    }
  }

  /** The text received so far, for a partial result when a call is cut off. */
  partialText(): string {
    return this.#textParts.join("");
  }

  finish(): AssembledAnswer {
    if (!this.#sawChoice) {
      throw llmError("LLM_BAD_RESPONSE", `${this.#where()} answered with no choices`, this.#site, {
        retryable: true,
      });
    }
    if (!this.#finishReason) {
      throw llmError(
        "LLM_BAD_RESPONSE",
        `the stream from ${this.#where()} ended before the model finished (no finish_reason)`,
        this.#site,
        { retryable: true, hint: "the connection was cut or the server closed the stream early" },
      );
    }
    const toolCalls = [...this.#toolCalls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([index, call]) => this.#completeToolCall(index, call));
    const finishReason = FINISH_REASONS.has(this.#finishReason)
      ? (this.#finishReason as FinishReason)
      : "stop";
    return { text: this.#textParts.join(""), toolCalls, finishReason, usage: this.#usage };
  }

  #addToolCallDelta(
    delta: NonNullable<NonNullable<ChatChunk["choices"][number]["delta"]>["tool_calls"]>[number],
  ): void {
    let call = this.#toolCalls.get(delta.index);
    if (!call) {
      call = { id: undefined, name: "", argumentParts: [] };
      this.#toolCalls.set(delta.index, call);
    }
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += delta.function.name;
    const piece = delta.function?.arguments;
    if (piece) {
      call.argumentParts.push(piece);
      this.#characters += piece.length;
    }
  }

  #completeToolCall(index: number, call: PartialToolCall): ChatToolCall {
    if (!call.name) {
      throw llmError(
        "LLM_BAD_RESPONSE",
        `${this.#where()} sent tool call #${index} without a name`,
        this.#site,
        {
          retryable: true,
        },
      );
    }
    const argumentsText = call.argumentParts.join("");
    return {
      // Some servers (older Ollama) send no ids; the loop needs one to pair the result.
      id: call.id ?? `call_${index}_${Math.random().toString(36).slice(2, 10)}`,
      type: "function",
      function: { name: call.name, arguments: argumentsText.trim() === "" ? "{}" : argumentsText },
    };
  }

  #where(): string {
    return `${this.#site.model} at ${this.#site.endpoint}`;
  }
}
