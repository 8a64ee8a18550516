import type { ChatMessage } from "../llm/chat-message.js";
import type { CheckpointRecords } from "./checkpoint-records.js";

/**
 * Checkpoints whose every string is masked before it is kept, as events are: tool outputs reach the
 * conversation masked already, but what the model writes itself (its text, a tool call's
 * arguments) and the task may hold a secret's value, and the checkpoint is written to `data_dir`
 * or the shared database. A resumed run continues from the masked conversation.
 *
 * A run saves its whole conversation every round, and the conversation only grows by new message
 * objects (the worker never changes one in place): each message is masked once, and its masked copy
 * reused by the run's later saves while `generation()` (the redactor's count of known secrets; it
 * changes when one is learned) stays the same. Without the cache masking cost O(rounds²) per run.
 */
export function maskingCheckpoints(
  records: CheckpointRecords,
  redactValue: <Value>(value: Value) => Value,
  generation: () => number = () => 0,
): CheckpointRecords {
  return {
    forRun: (run, resumeFrom) => {
      const checkpoints = records.forRun(run, resumeFrom);
      let masked = new WeakMap<ChatMessage, ChatMessage>();
      let maskedAt = generation();
      const maskMessage = (message: ChatMessage): ChatMessage => {
        const known = masked.get(message);
        if (known) return known;
        const copy = redactValue(message);
        masked.set(message, copy);
        return copy;
      };
      return {
        resumeFrom: checkpoints.resumeFrom,
        save: ({ messages, ...rest }) => {
          if (generation() !== maskedAt) {
            masked = new WeakMap();
            maskedAt = generation();
          }
          return checkpoints.save({ ...redactValue(rest), messages: messages.map(maskMessage) });
        },
      };
    },
    load: (run) => records.load(run),
    remove: (run) => records.remove(run),
  };
}
