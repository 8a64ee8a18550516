import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { type ScriptedReplyValue, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";

const FAKE_CLAUDE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/cli/claude");

const kit = useTestKit();

/** The lead's one model call: it spends `usage` and hands the task to its CLI sub-agent. */
function delegating(usage: { promptTokens: number; completionTokens: number }): () => ScriptedReplyValue {
  let called = false;
  return () => {
    if (called) return textReply("done", { usage: { promptTokens: 1, completionTokens: 1 } });
    called = true;
    return toolCallReply(
      { name: "agent__coder", arguments: { task: "tidy the notes in the folder" } },
      { usage },
    );
  };
}

/** A lead (LLM) whose sub-agent `coder` runs Claude Code; the fake records its start in `started`. */
async function leadProject(
  llmConfig: (url: string) => Record<string, unknown>,
  lead: Record<string, unknown>,
) {
  const llm = await kit.scriptedLlm();
  const project = kit.project({
    llmUrl: llm.url,
    config: {
      llm: llmConfig(llm.url),
      cli_tools: { claude: { command: FAKE_CLAUDE, env: { FAKE_CLI_ARGS_FILE: "claude-started.json" } } },
    },
  });
  project.writeAgent("coder", { worker: "cli", cli: { tool: "claude", fallback: "llm" }, workdir: "./work" });
  project.writeAgent("lead", { agents: ["coder"], ...lead });
  // Relative: the fake writes it in its working folder, the sub-agent's workdir.
  return { llm, project, started: path.join(project.root, "work", "claude-started.json") };
}

describe("a CLI sub-agent started when its parent's budget is nearly spent", { timeout: 90_000 }, () => {
  it("ends budget_exceeded without starting the CLI when its prompt passes the tokens left", async () => {
    const { llm, project, started } = await leadProject(
      (url) => ({ base_url: url, api_key: "test-key", model: "scripted" }),
      { limits: { max_tokens: 2_000 } },
    );
    // 1,995 of the lead's 2,000 tokens spent: the sub-agent inherits 5.
    llm.setDefaultReply(delegating({ promptTokens: 1_990, completionTokens: 5 }));
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "lead", "delegate the tidying");
    const lead = await waitForRunEnd(daemon, run);
    const [child] = await listRuns(daemon, `?parent=${run}`);
    expect(child).toMatchObject({ agent: "coder", status: "failed", reason: "budget_exceeded" });
    expect(child?.error?.message).toContain("not started");
    expect(existsSync(started), "the CLI was started").toBe(false);
    // No fallback spent the sliver on the model either; the lead ends at its budget too.
    expect(llm.chatRequests).toHaveLength(1);
    expect(lead).toMatchObject({ status: "failed", reason: "budget_exceeded" });
  });

  it("ends budget_exceeded without starting the CLI when nothing of the cost budget is left", async () => {
    // The lead's one call costs its whole $0.01 (1,000 tokens at $10 a million), not more.
    const { llm, project, started } = await leadProject(
      (url) => ({
        base_url: url,
        api_key: "test-key",
        model: "scripted",
        prices: { scripted: { input: 10, output: 10 } },
      }),
      { limits: { max_cost_usd: 0.01 } },
    );
    llm.setDefaultReply(delegating({ promptTokens: 900, completionTokens: 100 }));
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "lead", "delegate the tidying");
    await waitForRunEnd(daemon, run);
    const [child] = await listRuns(daemon, `?parent=${run}`);
    expect(child).toMatchObject({ agent: "coder", status: "failed", reason: "budget_exceeded" });
    expect(existsSync(started), "the CLI was started").toBe(false);
  });
});
