import type { CliTranscript } from "./cli-transcript.js";

/** Longest note handed to the LLM worker; the end of the CLI's work matters most. */
const MAX_NOTE_CHARACTERS = 6_000;

/**
 * Tells the LLM worker that it continues a task a CLI tool could not finish, with what the tool
 * had already said and done, so the model can build on it instead of starting blind.
 */
export function fallbackNote(tool: string, why: string, transcript: CliTranscript | undefined): string {
  const lines = [`The CLI tool "${tool}" could not finish this task (${why}). Continue it yourself.`];
  const texts = transcript?.texts ?? [];
  const calls = transcript?.toolCalls ?? [];
  if (texts.length === 0 && calls.length === 0) return lines[0] ?? "";
  lines.push("Before it stopped, it had done this:");
  for (const call of calls) {
    const outcome = call.ok === undefined ? "no result" : call.ok ? "ok" : "failed";
    lines.push(`- tool call ${call.tool} ${JSON.stringify(call.arguments)} → ${outcome}`);
  }
  if (texts.length > 0) lines.push("Its messages:", ...texts.map((text) => `> ${text.trim()}`));
  const note = lines.join("\n");
  if (note.length <= MAX_NOTE_CHARACTERS) return note;
  return `${lines[0]}\n…\n${note.slice(note.length - MAX_NOTE_CHARACTERS)}`;
}
