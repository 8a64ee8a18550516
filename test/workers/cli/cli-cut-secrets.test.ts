import { describe, expect, it } from "vitest";
import { CLEAN_CLI_EXIT } from "../../support/clean-cli-exit.js";
import type { AgentEvent } from "../../../src/events/agent-event.js";
import { EventBus } from "../../../src/events/event-bus.js";
import { SecretRedactor } from "../../../src/secrets/secret-redactor.js";
import { claudeAdapter } from "../../../src/workers/cli/claude-adapter.js";
import { classifyFailure } from "../../../src/workers/cli/classify-failure.js";
import { MAX_CLI_TEXT_CHARACTERS } from "../../../src/workers/cli/cli-output-limits.js";
import { CliTranscript } from "../../../src/workers/cli/cli-transcript.js";

const SECRET = "sk-live-7f3a9c1e5b2d8f4a6c0e9b7d";

/** A transcript whose events go through the daemon's masking, as in a run. */
function maskedTranscript() {
  const redactor = new SecretRedactor();
  redactor.add("api_key", SECRET);
  const bus = new EventBus({ redact: redactor.redactEvent });
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const transcript = new CliTranscript(bus, "talker", "r_test", (text) => redactor.redactCutEnd(text));
  return { transcript, events };
}

describe("a CLI's text cut where a secret begins", () => {
  // Filler up to 12 characters before the cut, then the secret: its first 12 would be kept.
  const text = `${"x".repeat(MAX_CLI_TEXT_CHARACTERS - 12)}${SECRET} and more`;

  it("shows none of the secret in the thought nor in the answer", () => {
    const { transcript, events } = maskedTranscript();
    transcript.thought(text);

    const thought = events.find((event) => event.type === "thought");
    const shown = String((thought?.data as { text?: string } | undefined)?.text);
    expect(shown).toContain("[secret:api_key…]");
    expect(shown).not.toContain(SECRET.slice(0, 8));
    expect(transcript.answer).not.toContain(SECRET.slice(0, 8));
  });

  it("shows none of it when the text streamed in chunks", () => {
    const { transcript, events } = maskedTranscript();
    for (let start = 0; start < text.length; start += 7_000)
      transcript.thoughtChunk(text.slice(start, start + 7_000));
    transcript.flush();

    const shown = events
      .filter((event) => event.type === "thought")
      .map((event) => String((event.data as { text?: string }).text))
      .join("");
    expect(shown).not.toContain(SECRET.slice(0, 8));
    expect(transcript.answer).not.toContain(SECRET.slice(0, 8));
  });
});

describe("a CLI's failure message cut where a secret begins", () => {
  it("shows none of the secret in the error the run ends with", () => {
    const redactor = new SecretRedactor();
    redactor.add("api_key", SECRET);
    const transcript = new CliTranscript(new EventBus(), "talker", "r_test", (text) =>
      redactor.redactCutEnd(text),
    );
    // The reported text is cut at 500 characters: the secret's first 12 would be kept.
    const reported = `${"x".repeat(500 - 12)}${SECRET} was refused`;
    claudeAdapter().createLineParser()(
      JSON.stringify({ type: "result", is_error: true, result: reported }),
      transcript,
    );

    const failure = classifyFailure({
      adapter: claudeAdapter(),
      exit: CLEAN_CLI_EXIT,
      transcript,
      idleTimeoutMilliseconds: 60_000,
      now: new Date("2026-04-28T12:00:00Z"),
    });

    // The bus masks the error event as a whole; the cut piece must already be masked.
    const shown = redactor.redact(failure?.message ?? "");
    expect(shown).toContain("[secret:api_key…]");
    expect(shown).not.toContain(SECRET.slice(0, 8));
  });

  it("shows none of it in the last retry notice of a hung CLI", () => {
    const redactor = new SecretRedactor();
    redactor.add("api_key", SECRET);
    const transcript = new CliTranscript(new EventBus(), "talker", "r_test", (text) =>
      redactor.redactCutEnd(text),
    );
    transcript.retryNotice(`retrying ${"x".repeat(300 - 12 - 9)}${SECRET} in 5 s`);

    const shown = redactor.redact(transcript.lastRetryNotice ?? "");
    expect(shown).toContain("[secret:api_key…]");
    expect(shown).not.toContain(SECRET.slice(0, 8));
  });
});
