import { describe, expect, it } from "vitest";
import { cliHarness, isRunning } from "./cli-test-kit.js";

// The fakes print their first notice at once; 3 s leaves a loaded machine time to start them.
describe("the idle watchdog counts progress, not bytes", () => {
  it("ends a codex that only reconnects to an unreachable server at idle_timeout and falls back", async () => {
    const harness = cliHarness({ scenario: "reconnect_loop" });
    // Reconnect notices arrive every 150 ms; a byte-counting watchdog would never fire.
    const outcome = await harness.run({ tool: "codex", idle_timeout: "3s" }, { timeout: 60_000 });

    const [error] = harness.eventsOf("error");
    expect(error?.data).toMatchObject({ code: "CLI_HUNG", retryable: true });
    expect(error?.data.message).toContain("only retried");
    expect(error?.data.message).toContain("Reconnecting... waiting for network");
    expect(harness.eventsOf("fallback")[0]?.data).toMatchObject({ from: "cli:codex", reason: "hung" });
    expect(outcome).toMatchObject({ status: "completed", worker: "cli:codex→llm" });
    expect((await harness.waitForPids(1)).filter(isRunning)).toEqual([]);
  });

  it("reads a claude that only retries an unreachable API as hung, naming the retries", async () => {
    const harness = cliHarness({ scenario: "retry_loop" });
    const outcome = await harness.run({ tool: "claude", idle_timeout: "3s", fallback: "none" });

    expect(outcome).toMatchObject({ status: "failed", reason: "cli_error", error: { code: "CLI_HUNG" } });
    expect(outcome.error?.message).toMatch(/only retried .*attempt \d+\/10: Connection error/);
  });

  it("reads a claude that gave up on an unreachable API as a network failure and falls back", async () => {
    const harness = cliHarness({ scenario: "unreachable" });
    const outcome = await harness.run({ tool: "claude" });
    expect(harness.eventsOf("error")[0]?.data).toMatchObject({ code: "CLI_NETWORK", retryable: true });
    expect(harness.eventsOf("fallback")[0]?.data.reason).toBe("network");
    expect(outcome.worker).toBe("cli:claude→llm");
  });

  it("reads a gemini that only retries a 429 on stderr as a rate limit, and cools it down", async () => {
    const harness = cliHarness({ scenario: "retry_loop" });
    const outcome = await harness.run({ tool: "gemini", idle_timeout: "3s" });

    expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_RATE_LIMIT");
    expect(harness.eventsOf("fallback")[0]?.data.reason).toBe("rate_limit");
    expect(outcome.worker).toBe("cli:gemini→llm");
    // The next run goes straight to the fallback.
    await harness.run({ tool: "gemini", idle_timeout: "1s" });
    expect(harness.eventsOf("fallback")[1]?.data.reason).toBe("cooldown");
  });

  it("does not count a tool call of the CLI's own as idle time", async () => {
    // The fake claude runs `ls`, then waits for the go file before answering: the call is
    // answered, so the wait is model time and the watchdog must still see the final answer.
    const harness = cliHarness({ scenario: "success", waitForGo: true });
    const running = harness.run({ tool: "claude", idle_timeout: "2s" });
    await harness.log.waitFor((event) => event.type === "observation", 15_000);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(harness.goFile, "");
    expect(await running).toMatchObject({ status: "completed", worker: "cli:claude" });
  });
});
