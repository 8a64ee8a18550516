import type { ChatMessage, ChatToolCall } from "../../llm/chat-message.js";

/** What a call to the model would have failed on, and was fixed. */
export interface HistoryRepair {
  messages: ChatMessage[];
  /** Tool results added for calls that had none. */
  addedResults: number;
  /** Tool results dropped: no call asked for them, or a second result for one call. */
  droppedResults: number;
}

const MISSING_RESULT =
  "Error: this tool call was interrupted and has no result. Call it again if it is still needed.";

/**
 * Makes a history valid for the chat API: every assistant tool call is followed by exactly one
 * tool result (a stand-in is added when missing), and tool results that answer no pending call
 * are dropped. Returns the same array when nothing needed fixing.
 */
export function repairHistory(messages: ChatMessage[]): HistoryRepair {
  // Every round checks the whole history, which is almost always valid: the check allocates
  // nothing, and only a history that needs fixing is copied.
  if (isWellFormed(messages)) return { messages, addedResults: 0, droppedResults: 0 };
  const repaired: ChatMessage[] = [];
  let pending = new Map<string, boolean>();
  let addedResults = 0;
  let droppedResults = 0;

  const closeGroup = () => {
    for (const [callId, answered] of pending) {
      if (answered) continue;
      repaired.push({ role: "tool", tool_call_id: callId, content: MISSING_RESULT });
      addedResults += 1;
    }
    pending = new Map();
  };

  for (const message of messages) {
    if (message.role === "tool") {
      if (pending.get(message.tool_call_id) === false) {
        pending.set(message.tool_call_id, true);
        repaired.push(message);
      } else {
        droppedResults += 1;
      }
      continue;
    }
    closeGroup();
    repaired.push(message);
    if (message.role === "assistant")
      for (const call of message.tool_calls ?? []) pending.set(call.id, false);
  }
  closeGroup();

  if (addedResults === 0 && droppedResults === 0) return { messages, addedResults, droppedResults };
  return { messages: repaired, addedResults, droppedResults };
}

/**
 * `repairHistory` for one run's history, which the loop only appends to between rounds and never
 * changes a message of (as HistoryTokens relies on too). Checking the whole history every round
 * made a round's cost grow with the run; this checks only the messages appended since the last
 * well-formed check. Another array (compacted, repaired, resumed) is checked whole.
 */
export class HistoryRepairer {
  #messages: readonly ChatMessage[] | undefined;
  /** Length of the prefix found well formed; its scan ended on a message boundary there. */
  #checked = 0;
  #last: ChatMessage | undefined;

  repair(messages: ChatMessage[]): HistoryRepair {
    const grown =
      messages === this.#messages &&
      messages.length >= this.#checked &&
      (this.#checked === 0 || messages[this.#checked - 1] === this.#last);
    // A well-formed prefix ends where a full scan would start its next message: scanning on from
    // there says what scanning the whole would (a stray tool result there fails either way).
    if (isWellFormed(messages, grown ? this.#checked : 0)) {
      this.#messages = messages;
      this.#checked = messages.length;
      this.#last = messages.at(-1);
      return { messages, addedResults: 0, droppedResults: 0 };
    }
    this.#messages = undefined;
    this.#checked = 0;
    this.#last = undefined;
    return repairHistory(messages);
  }
}

/**
 * Whether every tool call has exactly one result right after its assistant message, and every
 * tool result answers such a call: what `repairHistory` would leave as it is. A call id used twice
 * in one message counts as not well formed (the repair then decides). `from`: where to start, the
 * end of a prefix already found well formed.
 */
function isWellFormed(messages: readonly ChatMessage[], from = 0): boolean {
  let index = from;
  while (index < messages.length) {
    const message = messages[index] as ChatMessage;
    index += 1;
    if (message.role === "tool") return false;
    if (message.role !== "assistant" || message.tool_calls === undefined) continue;
    const calls = message.tool_calls;
    const groupStart = index;
    while (index < messages.length) {
      const result = messages[index] as ChatMessage;
      if (result.role !== "tool") break;
      if (!callsInclude(calls, result.tool_call_id)) return false;
      for (let earlier = groupStart; earlier < index; earlier += 1) {
        if ((messages[earlier] as { tool_call_id: string }).tool_call_id === result.tool_call_id)
          return false;
      }
      index += 1;
    }
    if (index - groupStart !== calls.length) return false;
  }
  return true;
}

function callsInclude(calls: readonly ChatToolCall[], id: string): boolean {
  for (const call of calls) if (call.id === id) return true;
  return false;
}
