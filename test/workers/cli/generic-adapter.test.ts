import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type CliHarness, cliHarness, fixture } from "./cli-test-kit.js";

/** The summarize fake records its arguments NUL-separated. */
function recordedArgv(harness: CliHarness): string[] {
  return readFileSync(harness.argumentsFile, "utf8").split("\0").slice(0, -1);
}

function summarizeTool(scenario = "success") {
  return {
    summarize: {
      command: fixture("summarize"),
      args: ["{task}", "{model}", "{workdir}"],
      output: "text",
      env: { FAKE_CLI_SCENARIO: scenario },
    },
  };
}

describe("tools from config cli_tools", () => {
  it("fills the args template and takes stdout as the answer with output: text", async () => {
    const harness = cliHarness({ cliTools: summarizeTool() });
    const context = harness.context(
      { tool: "summarize", model: "m1", args: ["--verbose"] },
      { model: "fallback-model", task: "the PRs", systemPrompt: "" },
    );
    const outcome = await harness.worker().run(context);

    expect(recordedArgv(harness)).toEqual(["the PRs", "m1", harness.workdir, "--verbose"]);
    expect(outcome).toMatchObject({
      status: "completed",
      worker: "cli:summarize",
      result: `Summary of: the PRs\nmodel=m1 workdir=${harness.workdir}`,
    });
    expect(harness.eventsOf("result")[0]?.data.text).toBe(outcome.result);
  });

  it("never hands the vault's variables to the CLI child", async () => {
    process.env.AGENTD_SECRET_DEPLOY_TOKEN = "deploy-token-6b1f";
    process.env.AGENTD_VAULT_KEY = "vault-passphrase-0c7e";
    try {
      const harness = cliHarness({
        cliTools: {
          printenv: {
            command: "/bin/sh",
            args: [
              "-c",
              "env | grep -E '^AGENTD_(SECRET|VAULT|TOKEN)' || echo clean; echo visible=$VISIBLE",
              "{task}",
            ],
            output: "text",
            env: { VISIBLE: "yes" },
          },
        },
      });
      const outcome = await harness.run({ tool: "printenv", fallback: "none" });
      expect(outcome).toMatchObject({ status: "completed", result: "clean\nvisible=yes" });
    } finally {
      delete process.env.AGENTD_SECRET_DEPLOY_TOKEN;
      delete process.env.AGENTD_VAULT_KEY;
    }
  });

  it("drops a {model} argument when the agent sets no cli.model, and puts the system prompt ahead of the task", async () => {
    const harness = cliHarness({ cliTools: summarizeTool() });
    // The agent's `model` is the fallback LLM's: it never reaches the CLI.
    await harness.run({ tool: "summarize" }, { model: "fallback-model" });
    expect(recordedArgv(harness)).toEqual([
      "You write release notes.\n\n# Task\n\nWrite the notes for today",
      harness.workdir,
    ]);
  });

  it("hands the system prompt where the template asks for it with {system_prompt}", async () => {
    const harness = cliHarness({
      cliTools: {
        summarize: { ...summarizeTool().summarize, args: ["--system", "{system_prompt}", "{task}"] },
      },
    });
    await harness.run({ tool: "summarize" });
    expect(recordedArgv(harness)).toEqual([
      "--system",
      "You write release notes.",
      "Write the notes for today",
    ]);
  });

  it("reads an empty stdout on exit 0 as no result", async () => {
    const harness = cliHarness({ cliTools: summarizeTool("empty") });
    const outcome = await harness.run({ tool: "summarize", fallback: "none" });
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "cli_error",
      error: { code: "CLI_NO_RESULT" },
    });
  });

  it("reuses a built-in parser for another command with output: claude", async () => {
    const harness = cliHarness({
      cliTools: {
        "claude-beta": {
          command: fixture("claude"),
          args: ["-p", "{task}", "--output-format", "stream-json"],
          output: "claude",
        },
      },
    });
    const outcome = await harness.run({ tool: "claude-beta" });
    expect(outcome).toMatchObject({ status: "completed", worker: "cli:claude-beta" });
    expect(harness.eventsOf("action")[0]?.data.tool).toBe("Bash");
  });

  it("reports a command that does not exist as not installed, and falls back", async () => {
    const harness = cliHarness({ cliTools: { claude: { command: "/nonexistent/bin/claude" } } });
    const outcome = await harness.run({ tool: "claude" });

    expect(harness.eventsOf("error")[0]?.data).toMatchObject({ code: "CLI_NOT_INSTALLED", retryable: false });
    expect(harness.eventsOf("error")[0]?.data.message).toContain("/nonexistent/bin/claude");
    expect(harness.eventsOf("fallback")[0]?.data).toMatchObject({ reason: "not_installed" });
    expect(outcome).toMatchObject({ status: "completed", worker: "cli:claude→llm" });
  });

  it("reports a tool that is neither built in nor configured as not installed", async () => {
    const harness = cliHarness();
    const outcome = await harness.run({ tool: "aider", fallback: "none" });
    expect(outcome.error?.code).toBe("CLI_NOT_INSTALLED");
    expect(outcome.error?.message).toContain('unknown CLI tool "aider"');
  });
});
