import type { ChatMessage } from "../../llm/chat-message.js";
import { estimateMessageTokens, estimateMessagesTokens } from "../../llm/estimate-tokens.js";

/**
 * The estimated tokens of one run's history, kept up to date as it grows. The loop asks before
 * each model call (compaction's threshold, then the call's running budget estimate), and the
 * history only grows between rounds: the loop appends to its array and never changes a message it
 * has made (see masking-checkpoints.ts). Summing every message twice a round made a round's cost
 * grow with the run; this adds only the messages appended since the last time. Another array (a
 * compacted or repaired history, a resumed one) is summed whole.
 */
export class HistoryTokens {
  #messages: readonly ChatMessage[] | undefined;
  #counted = 0;
  #last: ChatMessage | undefined;
  #tokens = 0;

  /** The estimate of `messages` (estimateMessagesTokens). */
  of(messages: readonly ChatMessage[]): number {
    const grown =
      messages === this.#messages &&
      messages.length >= this.#counted &&
      (this.#counted === 0 || messages[this.#counted - 1] === this.#last);
    if (!grown) {
      this.#tokens = estimateMessagesTokens(messages);
    } else {
      for (let index = this.#counted; index < messages.length; index += 1)
        this.#tokens += estimateMessageTokens(messages[index] as ChatMessage);
    }
    this.#messages = messages;
    this.#counted = messages.length;
    this.#last = messages.at(-1);
    return this.#tokens;
  }
}
