import { describe, expect, it } from "vitest";
import type { EventPublisher } from "../../../src/events/event-bus.js";
import {
  MAX_CLI_TEXT_CHARACTERS,
  MAX_FALLBACK_NOTE_CHARACTERS,
} from "../../../src/workers/cli/cli-output-limits.js";
import { CliTranscript } from "../../../src/workers/cli/cli-transcript.js";
import { fallbackNote } from "../../../src/workers/cli/fallback-note.js";
import { SecretRedactor } from "../../../src/secrets/secret-redactor.js";

/** Events go nowhere: the note is what is checked. */
const nowhere: EventPublisher = { publish: () => undefined };

function transcript(): CliTranscript {
  return new CliTranscript(nowhere, "agent", "r_1");
}

describe("the note a failed CLI run hands the LLM fallback", () => {
  it("quotes a short run's tool calls and messages whole, with nothing cut", () => {
    const work = transcript();
    work.thought("Reading the notes first.");
    work.action("c1", "read_file", { path: "notes.md" });
    work.observation("c1", true, "the notes");
    work.thought("Now writing them.");
    const note = fallbackNote("claude", "quota", work);

    expect(note.split("\n")).toEqual([
      'The CLI tool "claude" could not finish this task (quota). Continue it yourself.',
      "Before it stopped, it had done this:",
      '- tool call read_file {"path":"notes.md"} → ok',
      "Its messages:",
      "> Reading the notes first.",
      "> Now writing them.",
    ]);
  });

  it("keeps the end of a run that said more than a string holds, and says what it cut", () => {
    const work = transcript();
    work.action("c1", "shell", { command: "make" });
    // 520 messages of 1 Mi characters: more than the longest string V8 makes (2^29 - 24).
    const message = "m".repeat(MAX_CLI_TEXT_CHARACTERS - 6);
    const count = 520;
    for (let index = 0; index < count; index += 1)
      work.thought(`${message}${String(index).padStart(6, "0")}`);
    const note = fallbackNote("claude", "crash", work);

    expect(note.length).toBeLessThan(MAX_FALLBACK_NOTE_CHARACTERS + 400);
    expect(note.endsWith(`m000${count - 1}`)).toBe(true);
    const kept = MAX_FALLBACK_NOTE_CHARACTERS - "> \n".length;
    const cut = (count * MAX_CLI_TEXT_CHARACTERS - kept).toLocaleString("en-US");
    expect(note.split("\n").slice(0, 3)).toEqual([
      'The CLI tool "claude" could not finish this task (crash). Continue it yourself.',
      `[agentd cut 1 earlier tool call and ${cut} earlier characters of its messages here: ` +
        "the note on a CLI's work is kept up to 6,000 characters (docs/cli-workers.md)]",
      "Its messages:",
    ]);
  });

  it("keeps the last tool calls that fit after the messages, and counts the others", () => {
    const work = transcript();
    for (let index = 0; index < 1_000; index += 1) {
      work.action(`c${index}`, "shell", { command: `step ${index}` });
      work.observation(`c${index}`, index % 2 === 0, "");
    }
    work.thought("Almost done.");
    const note = fallbackNote("codex", "hung", work);
    const lines = note.split("\n");

    expect(note.length).toBeLessThanOrEqual(MAX_FALLBACK_NOTE_CHARACTERS + 300);
    expect(lines.slice(-3)).toEqual([
      '- tool call shell {"command":"step 999"} → failed',
      "Its messages:",
      "> Almost done.",
    ]);
    const listed = lines.filter((line) => line.startsWith("- tool call")).length;
    expect(lines[1]).toBe(
      `[agentd cut ${1_000 - listed} earlier tool calls here: the note on a CLI's work is kept up to ` +
        "6,000 characters (docs/cli-workers.md)]",
    );
  });

  it("masks a vault value the cut of a long message leaves in part at its start", () => {
    const secret = "sk-live-4f9a2c7e1b8d3a6f0e5c";
    const redactor = new SecretRedactor();
    redactor.add("api_key", secret);
    const work = transcript();
    // The note keeps the message's last characters: the cut falls 12 characters before the value's end.
    const kept = MAX_FALLBACK_NOTE_CHARACTERS - "> \n".length;
    work.thought(`the key is ${secret}${"y".repeat(kept - 12)}`);
    // As the daemon hands it on: cut with the vault's redactor, then the whole note masked.
    const note = redactor.redactText(
      fallbackNote("claude", "crash", work, (text) => redactor.redactCutStart(text)),
    );

    expect(note).not.toContain(secret.slice(-12));
    expect(note).toContain("[secret:api_key…]yyy");
  });
});
