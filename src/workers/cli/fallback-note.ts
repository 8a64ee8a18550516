import { MAX_FALLBACK_NOTE_CHARACTERS } from "./cli-output-limits.js";
import type { CliToolCall, CliTranscript } from "./cli-transcript.js";

/** What the note quotes of the CLI's work, from its end back, and what it left out. */
interface QuotedWork {
  lines: string[];
  room: number;
  cutCharacters: number;
  cutCalls: number;
}

/**
 * Tells the LLM worker that it continues a task a CLI tool could not finish, with what the tool
 * had already said and done, so the model can build on it instead of starting blind. The work is
 * quoted from its end back, its messages first, up to MAX_FALLBACK_NOTE_CHARACTERS; a line where
 * the note starts says what was left out before.
 */
export function fallbackNote(
  tool: string,
  why: string,
  transcript: CliTranscript | undefined,
  cutStart: (text: string) => string = (text) => text,
): string {
  const head = `The CLI tool "${tool}" could not finish this task (${why}). Continue it yourself.`;
  const texts = transcript?.recentTexts.texts ?? [];
  const calls = transcript?.toolCalls ?? [];
  if (texts.length === 0 && calls.length === 0) return head;
  const messages = quoteMessages(texts, MAX_FALLBACK_NOTE_CHARACTERS, cutStart);
  messages.cutCharacters += transcript?.recentTexts.droppedCharacters ?? 0;
  const actions = quoteCalls(calls, messages.room);
  const lines = [head];
  if (messages.cutCharacters > 0 || actions.cutCalls > 0) lines.push(cutLine(messages, actions));
  if (actions.lines.length > 0) lines.push("Before it stopped, it had done this:", ...actions.lines);
  if (messages.lines.length > 0) lines.push("Its messages:", ...messages.lines);
  return lines.join("\n");
}

/**
 * The last messages that fit in `room`, the oldest of them cut to its end when it does not fit
 * whole; `cutStart` masks a secret that cut leaves in part at the start of what is kept.
 */
function quoteMessages(
  texts: readonly string[],
  room: number,
  cutStart: (text: string) => string,
): QuotedWork {
  const quoted: QuotedWork = { lines: [], room, cutCharacters: 0, cutCalls: 0 };
  for (let index = texts.length - 1; index >= 0; index -= 1) {
    const text = (texts[index] ?? "").trim();
    if (text === "") continue;
    // "> " before it and a line end after it.
    const fits = Math.max(0, quoted.room - 3);
    const kept = text.length <= fits ? text : cutStart(text.slice(text.length - fits));
    if (kept !== "") quoted.lines.push(`> ${kept}`);
    quoted.room -= kept === "" ? 0 : kept.length + 3;
    quoted.cutCharacters += text.length - kept.length;
  }
  quoted.lines.reverse();
  return quoted;
}

/** The last tool calls whose lines fit in `room`; the others are only counted. */
function quoteCalls(calls: readonly CliToolCall[], room: number): QuotedWork {
  const quoted: QuotedWork = { lines: [], room, cutCharacters: 0, cutCalls: 0 };
  for (let index = calls.length - 1; index >= 0; index -= 1) {
    const call = calls[index];
    if (call === undefined) continue;
    // Once the room is gone no further call is written out: a thousand calls cost a count.
    const line = quoted.room > 0 ? callLine(call) : undefined;
    if (line === undefined || line.length + 1 > quoted.room) {
      quoted.room = 0;
      quoted.cutCalls += 1;
      continue;
    }
    quoted.lines.push(line);
    quoted.room -= line.length + 1;
  }
  quoted.lines.reverse();
  return quoted;
}

function callLine(call: CliToolCall): string {
  const outcome = call.ok === undefined ? "no result" : call.ok ? "ok" : "failed";
  return `- tool call ${call.tool} ${JSON.stringify(call.arguments)} → ${outcome}`;
}

/** Says what was left out, in the words of the CLI output cuts (cliCutNote). */
function cutLine(messages: QuotedWork, actions: QuotedWork): string {
  const parts: string[] = [];
  if (actions.cutCalls > 0) {
    parts.push(
      `${actions.cutCalls.toLocaleString("en-US")} earlier tool call${actions.cutCalls === 1 ? "" : "s"}`,
    );
  }
  if (messages.cutCharacters > 0) {
    parts.push(`${messages.cutCharacters.toLocaleString("en-US")} earlier characters of its messages`);
  }
  return (
    `[agentd cut ${parts.join(" and ")} here: the note on a CLI's work is kept up to ` +
    `${MAX_FALLBACK_NOTE_CHARACTERS.toLocaleString("en-US")} characters (docs/cli-workers.md)]`
  );
}
