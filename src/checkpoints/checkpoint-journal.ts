import { Buffer } from "node:buffer";
import { closeSync, constants, ftruncateSync, openSync, writeSync } from "node:fs";
import type { ChatMessage } from "../llm/chat-message.js";
import { jsonItemText } from "../llm/json-item-text.js";
import { isoTime } from "../util/iso-time.js";
import type { LatestFileWrites } from "../util/latest-file-writes.js";
import type { Checkpoint } from "./checkpoint.js";

/** What a save already in the kernel answers: one settled promise for all (a round makes two). */
const IN_THE_KERNEL: Promise<void> = Promise.resolve();

/** Appended bytes allowed past the last whole write before the file is written whole again. */
const MIN_APPENDED_BYTES = 256 * 1024;

export interface CheckpointJournalOptions {
  run: string;
  file: string;
  /** The store's atomic replacements (temp file, rename, off the event loop; waits for room). */
  writes: LatestFileWrites;
  now: () => Date;
}

/**
 * One run's checkpoint file, kept as a journal: a save whose conversation only grew since the last
 * one (the usual round: the model's answer, then each tool result) is one line appended on the
 * event loop (its new messages and the state), in the kernel once `save` returns, so safe from
 * kill -9 before the round's tools run; anything else (the first save, a compaction, a value the
 * redactor learned mid-run, which masks the messages again) replaces the whole file atomically
 * with one line off the event loop, as does a save after an append failed (it then waits for room
 * like every replacement) and one once the appended lines outweigh the last whole write (so the
 * file stays within about twice its state). A line whose append fails is cut off again; one a
 * power cut tore is ignored when the file is read (readCheckpointJournal).
 */
export class CheckpointJournal {
  readonly #options: CheckpointJournalOptions;
  /** The messages the file holds, or is about to once its replacement lands (the saved objects). */
  #messages: readonly ChatMessage[] = [];
  /** The round, spending and cost last saved, and as written. */
  #state: Pick<Checkpoint, "round" | "usage" | "cost_usd"> | undefined;
  #stateJson = "";
  #removedToolsJson = "";
  #recentCallsJson = "";
  /** The lists those two were serialised from, to compare the next save's with. */
  #removedTools: readonly string[] = [];
  #recentCalls: readonly string[] = [];
  /** True once the file on disk holds the last save (its replacement landed, appends since). */
  #current = false;
  #descriptor: number | undefined;
  /** The file's size while current. */
  #size = 0;
  #wholeBytes = 0;
  #appendedBytes = 0;
  #replacements = 0;
  #closed = false;

  constructor(options: CheckpointJournalOptions) {
    this.#options = options;
  }

  /** Keeps the state; resolves once it is in the kernel (an append: already when this returns). */
  save(checkpoint: Omit<Checkpoint, "run" | "saved_at">): Promise<void> {
    const { messages, removed_tools, recent_calls } = checkpoint;
    if (this.#current && this.#extends(messages)) {
      // A tool result's save has the state of the model call's before it: serialised once.
      const stateJson = this.#sameState(checkpoint) ? this.#stateJson : stateJsonOf(checkpoint);
      // The lists change a few times a run: compared with the last save's before serialising.
      const removedToolsJson = sameStrings(removed_tools, this.#removedTools)
        ? this.#removedToolsJson
        : JSON.stringify(removed_tools);
      const recentCallsJson = sameStrings(recent_calls, this.#recentCalls)
        ? this.#recentCallsJson
        : JSON.stringify(recent_calls);
      const added = messages.slice(this.#messages.length);
      const unchanged =
        added.length === 0 &&
        stateJson === this.#stateJson &&
        removedToolsJson === this.#removedToolsJson &&
        recentCallsJson === this.#recentCallsJson;
      // The file holds this state already (the end of a round whose last result was saved).
      if (unchanged) return IN_THE_KERNEL;
      let text = `{"keep":${this.#messages.length},${stateJson.slice(1, -1)}`;
      if (removedToolsJson !== this.#removedToolsJson) text += `,"removed_tools":${removedToolsJson}`;
      if (recentCallsJson !== this.#recentCallsJson) text += `,"recent_calls":${recentCallsJson}`;
      // An ISO date holds nothing JSON escapes.
      text += `,"saved_at":"${this.#now()}","messages":${messagesJson(added)}}\n`;
      const line = Buffer.from(text, "utf8");
      if (this.#appendedBytes + line.length <= Math.max(this.#wholeBytes, MIN_APPENDED_BYTES)) {
        if (this.#append(line)) {
          this.#messages = messages;
          this.#keepState(checkpoint, stateJson);
          // Copies: the caller may change its lists after the save.
          if (removedToolsJson !== this.#removedToolsJson) this.#removedTools = [...removed_tools];
          if (recentCallsJson !== this.#recentCallsJson) this.#recentCalls = [...recent_calls];
          this.#removedToolsJson = removedToolsJson;
          this.#recentCallsJson = recentCallsJson;
          return IN_THE_KERNEL;
        }
      }
    }
    return this.#replace(checkpoint);
  }

  /** Lets go of the file (the next save, if any, writes it whole). */
  close(): void {
    this.#closed = true;
    this.#current = false;
    this.#closeDescriptor();
  }

  /** Whether `messages` begins with every message the file holds, the same objects. */
  #extends(messages: readonly ChatMessage[]): boolean {
    const held = this.#messages;
    if (messages.length < held.length) return false;
    for (let index = held.length - 1; index >= 0; index -= 1) {
      if (messages[index] !== held[index]) return false;
    }
    return true;
  }

  /** Appends `line` whole, or leaves the file as it was and returns false. */
  #append(line: Buffer): boolean {
    const { file } = this.#options;
    try {
      // Not created here, nor through a link put in its place: such a file is written whole again.
      this.#descriptor ??= openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    } catch {
      this.#current = false;
      return false;
    }
    const descriptor = this.#descriptor;
    try {
      for (let offset = 0; offset < line.length;) {
        offset += writeSync(descriptor, line, offset, line.length - offset);
      }
    } catch {
      // ENOSPC mid-line, say: cut it off; the whole write that follows waits for room, and replaces
      // the file in any case (a torn end left by a failed cut included).
      try {
        ftruncateSync(descriptor, this.#size);
      } catch {
        // The replacement that follows rewrites the file.
      }
      this.#current = false;
      this.#closeDescriptor();
      return false;
    }
    this.#size += line.length;
    this.#appendedBytes += line.length;
    return true;
  }

  #replace(checkpoint: Omit<Checkpoint, "run" | "saved_at">): Promise<void> {
    const { messages, removed_tools, recent_calls, ...rest } = checkpoint;
    const { run, file, writes } = this.#options;
    // The rename gives the file a new inode: appends go to a descriptor opened after it.
    this.#closeDescriptor();
    this.#current = false;
    this.#messages = messages;
    this.#keepState(checkpoint, stateJsonOf(checkpoint));
    this.#removedToolsJson = JSON.stringify(removed_tools);
    this.#recentCallsJson = JSON.stringify(recent_calls);
    this.#removedTools = [...removed_tools];
    this.#recentCalls = [...recent_calls];
    const head = JSON.stringify({ run, ...rest, removed_tools, recent_calls, saved_at: this.#now() });
    const text = `${head.slice(0, -1)},"messages":${messagesJson(messages)}}\n`;
    this.#replacements += 1;
    const replacement = this.#replacements;
    const written = writes.write(file, text, { sync: false });
    written.then(
      () => {
        if (replacement !== this.#replacements || this.#closed) return;
        this.#current = true;
        this.#size = Buffer.byteLength(text, "utf8");
        this.#wholeBytes = this.#size;
        this.#appendedBytes = 0;
      },
      () => undefined,
    );
    return written;
  }

  #now(): string {
    return isoTime(this.#options.now());
  }

  /** Whether the checkpoint's round, spending and cost are those of the last save. */
  #sameState({ round, usage, cost_usd }: Omit<Checkpoint, "run" | "saved_at">): boolean {
    const last = this.#state;
    return (
      last !== undefined &&
      round === last.round &&
      cost_usd === last.cost_usd &&
      usage.prompt_tokens === last.usage.prompt_tokens &&
      usage.completion_tokens === last.usage.completion_tokens &&
      usage.total_tokens === last.usage.total_tokens
    );
  }

  #keepState({ round, usage, cost_usd }: Omit<Checkpoint, "run" | "saved_at">, json: string): void {
    // The usage copied: the caller may change its object after the save.
    this.#state = { round, usage: { ...usage }, cost_usd };
    this.#stateJson = json;
  }

  #closeDescriptor(): void {
    if (this.#descriptor === undefined) return;
    try {
      closeSync(this.#descriptor);
    } catch {
      // Closed either way.
    }
    this.#descriptor = undefined;
  }
}

/** The checkpoint's round, spending and cost as JSON, in that order. */
function stateJsonOf({ round, usage, cost_usd }: Omit<Checkpoint, "run" | "saved_at">): string {
  return JSON.stringify({ round, usage, cost_usd });
}

/** `JSON.stringify(messages)`, each message's text made once for its line and its requests. */
function messagesJson(messages: readonly ChatMessage[]): string {
  if (messages.length === 0) return "[]";
  let text = `[${jsonItemText(messages[0] as ChatMessage)}`;
  for (let index = 1; index < messages.length; index += 1)
    text += `,${jsonItemText(messages[index] as ChatMessage)}`;
  return `${text}]`;
}

/** Whether two lists hold the same strings in the same order. */
function sameStrings(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) {
    if (left[index] !== right[index]) return false;
  }
  return true;
}
