import { describe, expect, it } from "vitest";
import { cliHarness } from "./cli-test-kit.js";

describe("Codex CLI through the CLI worker", () => {
  it("runs codex exec --json with stdin closed and maps its items to events", async () => {
    const harness = cliHarness();
    // The fake reads stdin to its end like the real one: an open stdin would hang it.
    const outcome = await harness.run(
      { tool: "codex", model: "gpt-5-codex", idle_timeout: "20s" },
      { model: "gpt-4o", task: "-fix it" },
    );

    expect(harness.recordedArguments().argv).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-C",
      harness.workdir,
      "-m",
      "gpt-5-codex",
      "--sandbox",
      "workspace-write",
      "-c",
      'developer_instructions="You write release notes."',
      "--",
      "-fix it",
    ]);
    expect(outcome).toMatchObject({
      status: "completed",
      result: "Finished: -fix it",
      worker: "cli:codex",
      usage: { prompt_tokens: 24763, completion_tokens: 122, total_tokens: 24885 },
    });
    expect(harness.eventsOf("action").map((event) => [event.data.tool, event.data.arguments])).toEqual([
      ["shell", { command: "bash -lc ls" }],
      ["file_change", { changes: [{ path: "notes.md", kind: "add" }] }],
    ]);
    expect(harness.eventsOf("observation").map((event) => [event.data.ok, event.data.output])).toEqual([
      [true, "docs\nsrc\n"],
      [true, "add notes.md"],
    ]);
    expect(harness.eventsOf("thought").map((event) => event.data.text)).toEqual([
      "**Listing the files**",
      "Finished: -fix it",
    ]);
  });

  it("reads a usage-limit turn failure as quota with its reset time", async () => {
    const now = new Date("2026-05-01T10:00:00Z");
    const harness = cliHarness({ scenario: "quota", now: () => now });
    const outcome = await harness.run({ tool: "codex", fallback: "none" });

    expect(outcome).toMatchObject({ status: "failed", reason: "cli_error", error: { code: "CLI_QUOTA" } });
    const again = await harness.run({ tool: "codex", fallback: "none" }, { runId: "r_again" });
    expect(again.error?.code).toBe("CLI_COOLDOWN");
    // "try again in 2 days 3 hours 5 minutes"
    expect(again.error?.message).toContain("until 2026-05-03T13:05:00.000Z");
  });

  it("reads a death by signal as a crash", async () => {
    const harness = cliHarness({ scenario: "crash" });
    const outcome = await harness.run({ tool: "codex", fallback: "none" });
    expect(outcome.error?.code).toBe("CLI_CRASH");
    expect(outcome.error?.message).toContain("SIGSEGV");
    expect(harness.eventsOf("action")[0]?.data.tool).toBe("shell");
  });

  it("reads exit 0 without turn.completed as no result", async () => {
    const harness = cliHarness({ scenario: "no_result" });
    const outcome = await harness.run({ tool: "codex" });
    expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_NO_RESULT");
    expect(harness.llm.calls[0]?.note).toContain("**Planning**");
    expect(outcome.worker).toBe("cli:codex→llm");
  });
});
