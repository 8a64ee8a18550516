import type { ChatMessage } from "../llm/chat-message.js";
import type { CheckpointRecords } from "./checkpoint-records.js";

/** What the masking needs of the vault's redactor. */
export interface CheckpointRedactor {
  /** A copy of a JSON-like value with every string masked. */
  redactValue<Value>(value: Value): Value;
  /** How many forms of secret values it knows: grows when it learns one. */
  readonly size: number;
}

/**
 * Checkpoints whose every string is masked before it is kept, as events are: tool outputs reach the
 * conversation masked already, but what the model writes itself (its text, a tool call's
 * arguments) and the task may hold a secret's value, and the checkpoint is written to `data_dir`
 * or the shared database. A resumed run continues from the masked conversation.
 *
 * A run saves its whole conversation several times a round, and the conversation only grows: each
 * message is masked once per run (the loop never changes a message it has made, it adds new ones),
 * not at every save. Masking is the costly part (every form of every value, in every view of the
 * text): re-masking the system prompt (a memory section of 8,000 characters, say) and the history
 * at each save made a round's cost grow with the prompt. Once the redactor learns a new value,
 * every message is masked again, so a value learned mid-run is masked in what came before it too.
 */
export function maskingCheckpoints(
  records: CheckpointRecords,
  redactor: CheckpointRedactor,
): CheckpointRecords {
  return {
    forRun: (run, resumeFrom) => {
      const checkpoints = records.forRun(run, resumeFrom);
      const masked = new MaskedMessages(redactor);
      return {
        resumeFrom: checkpoints.resumeFrom,
        // The rest of the state is numbers: nothing in it to mask.
        save: (checkpoint) =>
          checkpoints.save({
            round: checkpoint.round,
            usage: checkpoint.usage,
            cost_usd: checkpoint.cost_usd,
            removed_tools: masked.texts(checkpoint.removed_tools, "removed_tools"),
            recent_calls: masked.texts(checkpoint.recent_calls, "recent_calls"),
            messages: masked.all(checkpoint.messages),
          }),
      };
    },
    load: (run) => records.load(run),
    remove: (run) => records.remove(run),
  };
}

/** Texts of the state's lists kept masked: a run's recent calls are a handful at a time. */
const TEXTS_KEPT = 256;

/** Each message of one run masked once, for as long as the redactor knows no new value. */
class MaskedMessages {
  readonly #redactor: CheckpointRedactor;
  #masked = new WeakMap<ChatMessage, ChatMessage>();
  /** Masked texts of the state's lists, by text. */
  #texts = new Map<string, string>();
  #knownForms: number;

  constructor(redactor: CheckpointRedactor) {
    this.#redactor = redactor;
    this.#knownForms = redactor.size;
  }

  /** The messages of the last save, and what they were masked to, position by position. */
  #lastMessages: readonly ChatMessage[] = [];
  #lastMasked: ChatMessage[] = [];

  /**
   * Every message masked. A save repeats the last one's messages and adds a few: the longest run
   * of them found at the same positions as before takes its masked forms from there in one copy
   * (a comparison instead of a lookup each), the rest go through `of`. The array is the caller's
   * own, unchanged after the save (RunCheckpoints), so it is kept as it is.
   */
  all(messages: readonly ChatMessage[]): ChatMessage[] {
    this.#forgetIfLearned();
    const last = this.#lastMessages;
    const limit = Math.min(last.length, messages.length);
    let same = 0;
    while (same < limit && messages[same] === last[same]) same += 1;
    const masked = same === 0 ? [] : this.#lastMasked.slice(0, same);
    for (let index = same; index < messages.length; index += 1)
      masked.push(this.of(messages[index] as ChatMessage));
    this.#lastMessages = messages;
    this.#lastMasked = masked;
    return masked;
  }

  /**
   * A list of texts (the loop detector's recent calls, the removed tools) masked: every save
   * repeats most of the last one's, so each text is masked once, and the list comes back as it is
   * when no text in it changed. A list with the texts of its last save (`which`: the model call's
   * save repeats the tool result's before it) takes that save's answer without a lookup each.
   */
  texts(list: readonly string[], which: "removed_tools" | "recent_calls"): string[] {
    this.#forgetIfLearned();
    if (this.#redactor.size === 0) return list as string[];
    const last = this.#lastLists[which];
    if (last !== undefined && sameTexts(list, last.list)) return last.masked;
    // Copies: the caller may change its list after the save (an unchanged list is given back as it is).
    const copy = [...list];
    const masked = this.#maskedList(list);
    this.#lastLists[which] = { list: copy, masked: masked === list ? copy : masked };
    return masked;
  }

  /** The last list of each kind, and what it was masked to (forgotten with the rest). */
  #lastLists: Partial<Record<"removed_tools" | "recent_calls", { list: string[]; masked: string[] }>> = {};

  #maskedList(list: readonly string[]): string[] {
    let copy: string[] | undefined;
    for (let index = 0; index < list.length; index += 1) {
      const text = list[index] as string;
      let masked = this.#texts.get(text);
      if (masked === undefined) {
        if (this.#texts.size >= TEXTS_KEPT) this.#texts.clear();
        masked = this.#redactor.redactValue(text);
        this.#texts.set(text, masked);
      }
      if (copy === undefined && masked !== text) copy = list.slice(0, index);
      copy?.push(masked);
    }
    return copy ?? (list as string[]);
  }

  readonly of = (message: ChatMessage): ChatMessage => {
    this.#forgetIfLearned();
    let masked = this.#masked.get(message);
    if (masked === undefined) {
      masked = this.#redactor.redactValue(message);
      this.#masked.set(message, masked);
    }
    return masked;
  };

  /** Once the redactor learns a value, everything is masked again. */
  #forgetIfLearned(): void {
    if (this.#redactor.size === this.#knownForms) return;
    this.#masked = new WeakMap();
    this.#lastMessages = [];
    this.#texts = new Map();
    this.#lastLists = {};
    this.#knownForms = this.#redactor.size;
  }
}

/** Whether two lists hold the same texts in the same order. */
function sameTexts(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}
