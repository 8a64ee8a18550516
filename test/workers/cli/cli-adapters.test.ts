import { describe, expect, it } from "vitest";
import { cliHarness } from "./cli-test-kit.js";

/** What each fake prints for the cases every adapter reads the same way. */
const ADAPTERS = [
  {
    tool: "claude",
    warnings: ["Loading Claude Code", "not JSON", 'unexpected shape of a "assistant" line'],
    authMessage: "Invalid API key",
  },
  {
    tool: "gemini",
    warnings: ["not JSON): [WARN] Skipping unreadable directory", 'not JSON): {"type":'],
    authMessage: "Please set an Auth method",
  },
] as const;

describe.each(ADAPTERS)(
  "$tool through the CLI worker, like every adapter",
  ({ tool, warnings, authMessage }) => {
    it("reports lines that are not its JSON as warnings and still completes", async () => {
      const harness = cliHarness({ scenario: "garbage" });
      const outcome = await harness.run({ tool });

      expect(outcome.status).toBe("completed");
      const messages = harness.eventsOf("warning").map((event) => event.data.message);
      expect(messages).toHaveLength(warnings.length);
      warnings.forEach((warning, index) => expect(messages[index]).toContain(warning));
    });

    it("ends failed with cli_error and CLI_AUTH, in the tool's words, when fallback is none", async () => {
      const harness = cliHarness({ scenario: "auth" });
      const outcome = await harness.run({ tool, fallback: "none" });

      expect(outcome).toMatchObject({
        status: "failed",
        reason: "cli_error",
        worker: `cli:${tool}`,
        error: { code: "CLI_AUTH" },
      });
      expect(outcome.error?.message).toContain(authMessage);
      expect(harness.eventsOf("fallback")).toEqual([]);
      expect(harness.llm.calls).toEqual([]);
    });

    it("reads a rate limit as CLI_RATE_LIMIT and falls back to the LLM with that reason", async () => {
      const harness = cliHarness({ scenario: "rate_limit" });
      const outcome = await harness.run({ tool });

      expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_RATE_LIMIT");
      expect(harness.eventsOf("fallback")[0]?.data).toMatchObject({
        from: `cli:${tool}`,
        to: "llm",
        reason: "rate_limit",
      });
      expect(outcome).toMatchObject({ status: "completed", worker: `cli:${tool}→llm` });
    });
  },
);
