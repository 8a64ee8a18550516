import { describe, expect, it } from "vitest";
import { CLEAN_CLI_EXIT } from "../../support/clean-cli-exit.js";
import { AgentdError } from "../../../src/errors/agentd-error.js";
import { EventBus } from "../../../src/events/event-bus.js";
import { claudeAdapter } from "../../../src/workers/cli/claude-adapter.js";
import { classifyFailure } from "../../../src/workers/cli/classify-failure.js";
import { CliTranscript } from "../../../src/workers/cli/cli-transcript.js";
import { codexAdapter } from "../../../src/workers/cli/codex-adapter.js";
import { geminiAdapter } from "../../../src/workers/cli/gemini-adapter.js";
import type { CliExit } from "../../../src/workers/cli/run-cli-process.js";

const now = new Date("2026-04-28T12:00:00Z");
function transcriptOf(adapter: ReturnType<typeof claudeAdapter>, lines: string[]): CliTranscript {
  const transcript = new CliTranscript(new EventBus(), "agent", "r_1");
  const parse = adapter.createLineParser();
  for (const line of lines) parse(line, transcript);
  return transcript;
}

function classify(
  adapter: ReturnType<typeof claudeAdapter>,
  lines: string[],
  exit: Partial<CliExit>,
): ReturnType<typeof classifyFailure> {
  const transcript = transcriptOf(adapter, lines);
  return classifyFailure({
    adapter,
    exit: { ...CLEAN_CLI_EXIT, ...exit },
    transcript,
    idleTimeoutMilliseconds: 60_000,
    now,
  });
}

const claudeResult = (fields: Record<string, unknown>) => JSON.stringify({ type: "result", ...fields });

describe("classifying a finished CLI child", () => {
  it("finds no failure when the tool gave its result and exited 0", () => {
    const failure = classify(claudeAdapter(), [claudeResult({ is_error: false, result: "done" })], {});
    expect(failure).toBeUndefined();
  });

  it("trusts the structured error over stderr noise", () => {
    const failure = classify(
      claudeAdapter(),
      [claudeResult({ is_error: true, api_error_status: 401, result: "OAuth token has expired" })],
      { exitCode: 1, failed: true, stderrTail: "Warning: rate limit headers missing" },
    );
    expect(failure).toMatchObject({ kind: "auth", code: "CLI_AUTH" });
  });

  it("tells a per-minute rate limit from an exhausted quota", () => {
    const rate = classify(
      codexAdapter(),
      [JSON.stringify({ type: "error", message: "Rate limit reached for gpt-5. Please try again in 20s." })],
      { exitCode: 1, failed: true },
    );
    expect(rate).toMatchObject({ kind: "rate_limit", retryAt: new Date("2026-04-28T12:00:20Z") });
    const quota = classify(
      claudeAdapter(),
      [claudeResult({ is_error: true, result: "5-hour limit reached ∙ resets 3pm" })],
      { exitCode: 1, failed: true },
    );
    expect(quota?.kind).toBe("quota");
  });

  it("does not take Gemini's routine stderr line for an auth problem", () => {
    const failure = classify(geminiAdapter(), [], {
      exitCode: 1,
      failed: true,
      stderrTail: "Loaded cached credentials.\nError: socket hang up\n",
    });
    expect(failure).toMatchObject({ kind: "crash" });
    expect(failure?.message).toContain("socket hang up");
  });

  it("reads the spawn error, the watchdog and the timeout before any output", () => {
    expect(classify(claudeAdapter(), [], { spawnErrorCode: "ENOENT", failed: true })?.kind).toBe(
      "not_installed",
    );
    expect(
      classify(claudeAdapter(), [], {
        ending: { kind: "cancelled", error: new AgentdError("CLI_HUNG", "hung") },
        signal: "SIGTERM",
      })?.message,
    ).toContain("1m");
    expect(
      classify(claudeAdapter(), [], {
        ending: { kind: "run", reason: "timeout", message: "timeout" },
        signal: "SIGTERM",
      })?.kind,
    ).toBe("timeout");
  });

  it("calls exit 0 with a result line but an empty answer no result", () => {
    const failure = classify(claudeAdapter(), [claudeResult({ is_error: false, result: "" })], {});
    expect(failure?.kind).toBe("no_result");
  });
});
