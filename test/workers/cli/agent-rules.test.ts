import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness, isRunning } from "./cli-test-kit.js";

const rules = {
  tools: ["read_file", "write_file", "shell"],
  permissions: {
    allow: ["read_file", "shell(git log*)"],
    ask: [],
    deny: ["shell(echo *)", "shell(rm -rf*)", "http_request", "mcp:github/*"],
  },
  limits: { max_iterations: 7, max_cost_usd: 0.5 },
};

describe("the agent's rules reach the CLI", () => {
  it("gives claude its tools, allow and deny rules, turn limit and budget as its own flags", async () => {
    const harness = cliHarness();
    await harness.run({ tool: "claude" }, { frontmatter: rules });
    const { argv } = harness.recordedArguments();
    expect(argv).toEqual(
      expect.arrayContaining([
        "--tools=Read,Write,Edit,NotebookEdit,Bash",
        "--allowedTools=Read",
        "--allowedTools=Bash(git log*)",
        "--disallowedTools=Bash(echo *)",
        "--disallowedTools=Bash(rm -rf*)",
        "--disallowedTools=WebFetch",
        "--disallowedTools=mcp__github",
      ]),
    );
    expect(argv.slice(argv.indexOf("--max-turns"), argv.indexOf("--max-turns") + 4)).toEqual([
      "--max-turns",
      "7",
      "--max-budget-usd",
      "0.5",
    ]);
  });

  it("gives gemini a policy file with the deny and allow rules, and its turn limit in settings", async () => {
    const harness = cliHarness();
    await harness.run({ tool: "gemini" }, { frontmatter: rules });
    const started = harness.recordedArguments();
    const policyFile = started.argv[started.argv.indexOf("--policy") + 1] ?? "";
    const policy = started.files[policyFile] ?? "";
    expect(policy).toContain('toolName = "run_shell_command"\ncommandPrefix = "echo"\ndecision = "deny"');
    expect(policy).toContain('toolName = "run_shell_command"\ncommandPrefix = "git log"\ndecision = "allow"');
    expect(policy).toContain('toolName = "web_fetch"\ndecision = "deny"');
    expect(policy).toContain('toolName = "github__*"\ndecision = "deny"');
    // Tools the agent does not list are denied: list_dir and search_files are not in `tools`.
    expect(policy).toContain('toolName = "grep_search"\ndecision = "deny"');
    expect(policy).not.toContain('toolName = "write_file"\ndecision = "deny"');
    const settings = JSON.parse(started.files[started.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? ""] ?? "{}");
    expect(settings.model).toEqual({ maxSessionTurns: 7 });
  });

  it("lets codex write in its workdir with its own sandbox, and stands it down inside agentd's", async () => {
    const harness = cliHarness();
    await harness.run({ tool: "codex" });
    expect(harness.recordedArguments().argv).toEqual(
      expect.arrayContaining(["--sandbox", "workspace-write"]),
    );
    const sandboxed = harness.restart({ outerSandbox: true });
    await sandboxed.run(harness.context({ tool: "codex" }));
    const { argv } = harness.recordedArguments();
    expect(argv).toContain("--dangerously-bypass-approvals-and-sandbox");
    expect(argv).not.toContain("--sandbox");
  });

  it("honours the config folders and default args of cli_tools.<built-in> as given", async () => {
    const harness = cliHarness({
      cliTools: {
        codex: {
          command: undefined,
          args: ["-c", "model_reasoning_effort=low"],
          env: { CODEX_HOME: "/srv/agentd/codex-home" },
        },
      },
    });
    await harness.run({ tool: "codex", args: ["--ephemeral"] }, { task: "Fix it" });
    const started = harness.recordedArguments();
    expect(started.env.CODEX_HOME).toBe("/srv/agentd/codex-home");
    expect(started.argv.slice(-5)).toEqual([
      "-c",
      "model_reasoning_effort=low",
      "--ephemeral",
      "--",
      "Fix it",
    ]);
    expect(started.argv.indexOf("model_reasoning_effort=low")).toBeLessThan(
      started.argv.indexOf("--ephemeral"),
    );
  });
});

describe("the CLIs' own retries", () => {
  it("caps the retries of the provider the user defined in CODEX_HOME's config.toml", async () => {
    const harness = cliHarness();
    const codexHome = path.join(harness.root, "codex-home");
    mkdirSync(codexHome);
    writeFileSync(
      path.join(codexHome, "config.toml"),
      'model_provider = "litellm"\n\n[model_providers.litellm]\nname = "LiteLLM"\nbase_url = "http://127.0.0.1:4000/v1"\n',
    );
    const worker = cliHarness({ cliTools: { codex: { env: { CODEX_HOME: codexHome } } } });
    await worker.run({ tool: "codex" });
    const { argv } = worker.recordedArguments();
    expect(argv).toEqual(
      expect.arrayContaining([
        "model_providers.litellm.request_max_retries=1",
        "model_providers.litellm.stream_max_retries=1",
      ]),
    );
  });

  it("leaves Codex's built-in provider alone: it refuses an override", async () => {
    const harness = cliHarness({ cliTools: { codex: { env: { CODEX_HOME: "/nonexistent/codex-home" } } } });
    await harness.run({ tool: "codex" });
    expect(harness.recordedArguments().argv.join(" ")).not.toContain("max_retries");
  });
});

describe("budgets and limits of a CLI run", () => {
  it("stops claude mid-run when its streamed usage crosses max_tokens, and kills the tree", async () => {
    const harness = cliHarness({ scenario: "streamed_tokens" });
    const outcome = await harness.run({ tool: "claude" }, { frontmatter: { limits: { max_tokens: 1_200 } } });

    expect(outcome).toMatchObject({ status: "failed", reason: "budget_exceeded", worker: "cli:claude" });
    // msg_1 repeated per content block counts once: 610, then msg_2 brings 1,520.
    expect(outcome.usage.total_tokens).toBe(1_520);
    expect(harness.eventsOf("error")[0]?.data).toMatchObject({ code: "BUDGET_EXCEEDED", retryable: false });
    expect(harness.eventsOf("fallback")).toEqual([]);
    expect((await harness.waitForPids(1)).filter(isRunning)).toEqual([]);
  });

  it("ends the run budget_exceeded when claude stops at its own --max-budget-usd", async () => {
    const harness = cliHarness({ scenario: "budget_stop" });
    const outcome = await harness.run(
      { tool: "claude" },
      { frontmatter: { limits: { max_cost_usd: 0.00001 } } },
    );
    expect(harness.recordedArguments().argv).toEqual(expect.arrayContaining(["--max-budget-usd", "0.00001"]));
    expect(outcome).toMatchObject({ status: "failed", reason: "budget_exceeded", cost_usd: 0.000105 });
    expect(outcome.usage).toEqual({ prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 });
    expect(harness.eventsOf("fallback")).toEqual([]);
  });

  it("ends the run max_iterations when claude stops at its --max-turns", async () => {
    const harness = cliHarness({ scenario: "max_turns" });
    const outcome = await harness.run({ tool: "claude" }, { frontmatter: { limits: { max_iterations: 3 } } });
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "max_iterations",
      error: { code: "MAX_ITERATIONS" },
    });
  });

  it("prices codex's tokens with llm.prices and fails a run that cost more than max_cost_usd", async () => {
    const harness = cliHarness({
      scenario: "big_usage",
      llm: { prices: { "gpt-5-codex": { input: 10, output: 30 } } },
    });
    const outcome = await harness.run(
      { tool: "codex", model: "gpt-5-codex" },
      { frontmatter: { limits: { max_cost_usd: 0.01 } } },
    );
    // 24,763 prompt tokens at $10/M and 122 completion tokens at $30/M.
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "budget_exceeded",
      result: "Finished: Write the notes for today",
    });
    expect(outcome.cost_usd).toBeCloseTo(0.25129, 5);
  });
});

describe("calls the CLI's rules denied", () => {
  it("turns claude's permission_denials into warnings and does not call the run completed", async () => {
    const harness = cliHarness({ scenario: "denied" });
    const outcome = await harness.run({ tool: "claude" });

    const [warning] = harness.eventsOf("warning");
    expect(warning?.data.code).toBe("CLI_TOOL_DENIED");
    expect(warning?.data.message).toContain("Write was denied");
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "tool_error",
      error: { code: "CLI_PERMISSION_DENIED" },
      result: "I could not write notes.md: permission was denied.",
    });
    expect(harness.eventsOf("result")).toEqual([]);
  });

  it("reads a gemini tool call refused by policy as denied", async () => {
    const harness = cliHarness({ scenario: "denied" });
    const outcome = await harness.run({ tool: "gemini" });
    expect(harness.eventsOf("warning")[0]?.data.message).toContain("run_shell_command was denied");
    expect(outcome).toMatchObject({ status: "failed", error: { code: "CLI_PERMISSION_DENIED" } });
  });
});
