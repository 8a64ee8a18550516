import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "./cli-test-kit.js";

describe("CLI tool cooldowns", () => {
  it("sends runs straight to the fallback while the tool cools down, also after a restart", async () => {
    let now = new Date("2026-05-01T10:00:00Z");
    const harness = cliHarness({ scenario: "rate_limit", cooldown: 600_000, now: () => now });
    await harness.run({ tool: "claude" });
    expect(harness.eventsOf("fallback")[0]?.data.reason).toBe("rate_limit");

    harness.restart();
    rmSync(harness.argumentsFile);
    const outcome = await harness.run({ tool: "claude" }, { runId: "r_after_restart" });

    expect(existsSync(harness.argumentsFile)).toBe(false);
    expect(outcome).toMatchObject({ status: "completed", worker: "cli:claude→llm" });
    const fallback = harness.eventsOf("fallback")[1]?.data;
    expect(fallback).toMatchObject({ from: "cli:claude", to: "llm", reason: "cooldown" });
    // No reset time in the output: config cli.cooldown (10 minutes here).
    expect(fallback?.message).toContain("until 2026-05-01T10:10:00.000Z");
    expect(harness.llm.calls[1]?.note).toContain("cooling down");

    now = new Date("2026-05-01T10:10:01Z");
    await harness.run({ tool: "claude" }, { runId: "r_after_cooldown" });
    expect(existsSync(harness.argumentsFile)).toBe(true);
  });

  it("fails with CLI_COOLDOWN without starting the tool when fallback is none", async () => {
    const harness = cliHarness({ scenario: "quota" });
    await harness.run({ tool: "claude", fallback: "none" });
    rmSync(harness.argumentsFile);

    const outcome = await harness.run({ tool: "claude", fallback: "none" }, { runId: "r_second" });

    expect(outcome).toMatchObject({ status: "failed", reason: "cli_error", error: { code: "CLI_COOLDOWN" } });
    expect(existsSync(harness.argumentsFile)).toBe(false);
  });

  it("starts without cooldowns when the file is corrupt", async () => {
    const harness = cliHarness();
    const file = path.join(harness.dataDirectory, "cli-cooldowns.json");
    mkdirSync(harness.dataDirectory, { recursive: true });
    writeFileSync(file, "{ not json");
    harness.restart();
    const outcome = await harness.run({ tool: "claude" });
    expect(outcome.worker).toBe("cli:claude");
  });
});
