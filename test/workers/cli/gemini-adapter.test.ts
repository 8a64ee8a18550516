import { describe, expect, it } from "vitest";
import { cliHarness } from "./cli-test-kit.js";

describe("Gemini CLI through the CLI worker", () => {
  it("runs gemini -p with stream-json and joins streamed message chunks into one thought", async () => {
    const harness = cliHarness();
    const outcome = await harness.run(
      { tool: "gemini", model: "gemini-2.5-pro" },
      { model: "gpt-4o", task: "List the files" },
    );

    const started = harness.recordedArguments();
    expect(started.argv).toEqual([
      "--prompt=List the files",
      "-o",
      "stream-json",
      "-m",
      "gemini-2.5-pro",
      "--approval-mode",
      "auto_edit",
      "--skip-trust",
    ]);
    // The system prompt file and the settings that cap retries and turns, in the run's own TMPDIR.
    const systemFile = started.env.GEMINI_SYSTEM_MD ?? "";
    const settingsFile = started.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? "";
    expect(systemFile.startsWith(`${started.env.TMPDIR}/`)).toBe(true);
    expect(started.files[systemFile]).toBe("You write release notes.\n");
    expect(JSON.parse(started.files[settingsFile] ?? "{}")).toEqual({
      general: { maxAttempts: 2 },
      model: { maxSessionTurns: 50 },
    });
    expect(started.env.GEMINI_CLI_TRUST_WORKSPACE).toBe("true");
    expect(outcome).toMatchObject({
      status: "completed",
      result: "Here is the answer to: List the files",
      worker: "cli:gemini",
      usage: { prompt_tokens: 50, completion_tokens: 200, total_tokens: 250 },
    });
    expect(harness.eventsOf("thought").map((event) => event.data.text)).toEqual([
      "Here is the answer to: List the files",
    ]);
    expect(harness.eventsOf("action")[0]?.data).toEqual({
      call_id: "list_directory-1-1",
      tool: "list_directory",
      arguments: { dir_path: "." },
    });
    expect(harness.eventsOf("observation")[0]?.data).toMatchObject({ ok: true, output: "Listed 1 item(s)." });
  });

  it("reads a 429 quota result as quota and cools down for the retry delay it gives", async () => {
    const now = new Date("2026-05-01T10:00:00Z");
    const harness = cliHarness({ scenario: "quota", now: () => now });
    const outcome = await harness.run({ tool: "gemini" });

    expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_QUOTA");
    expect(outcome.worker).toBe("cli:gemini→llm");
    const second = await harness.run({ tool: "gemini" }, { runId: "r_second" });
    expect(second.worker).toBe("cli:gemini→llm");
    const cooldown = harness.eventsOf("fallback")[1]?.data;
    expect(cooldown?.reason).toBe("cooldown");
    // "Please retry in 47.5s" from the fake, counted from the injected clock.
    expect(cooldown?.message).toContain("until 2026-05-01T10:00:47.500Z");
  });

  it("explains exit code 55 (untrusted folder)", async () => {
    const harness = cliHarness({ scenario: "untrusted" });
    const outcome = await harness.run({ tool: "gemini", fallback: "none" });
    expect(outcome.error?.code).toBe("CLI_CRASH");
    expect(outcome.error?.message).toContain("trusted");
  });
});
