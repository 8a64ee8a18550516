import { describe, expect, it } from "vitest";
import { MAX_ANSWER_CHARACTERS } from "../../../src/llm/answer-size-limit.js";
import { textReply, toolCallReply } from "../../support/scripted-llm-server.js";
import { makeDefinition } from "../../support/make-definition.js";
import { LoopHarness } from "./loop-harness.js";
import { withScriptedLlmServer } from "../../support/with-scripted-llm-server.js";

const server = withScriptedLlmServer();

/** A model that calls echo with new arguments every round, so only a budget can end the run. */
function endlessToolCalls(usage?: { promptTokens: number; completionTokens: number }) {
  let round = 0;
  return () => {
    round += 1;
    return toolCallReply({ name: "echo", arguments: { text: `round ${round}` } }, usage ? { usage } : {});
  };
}

describe("LLM loop budgets", () => {
  it("ends failed with max_iterations after the last allowed round", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({ limits: { max_iterations: 3 } }),
    });
    server.setDefaultReply(endlessToolCalls());
    const outcome = await harness.run();
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "max_iterations",
      error: { code: "MAX_ITERATIONS" },
    });
    expect(server.chatRequests).toHaveLength(3);
  });

  it("ends failed with budget_exceeded once the tokens used reach max_tokens", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({ limits: { max_tokens: 1_000 } }),
    });
    server.setDefaultReply(endlessToolCalls({ promptTokens: 600, completionTokens: 500 }));
    const outcome = await harness.run();
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "budget_exceeded",
      error: { code: "BUDGET_EXCEEDED" },
    });
    expect(outcome.usage.total_tokens).toBe(1_100);
    expect(server.chatRequests).toHaveLength(1);
  });

  it("ends failed with budget_exceeded once the cost reaches max_cost_usd", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({ limits: { max_cost_usd: 0.5 } }),
      llm: { prices: { "test-model": { input: 1_000, output: 1_000 } } },
    });
    server.setDefaultReply(endlessToolCalls({ promptTokens: 300, completionTokens: 300 }));
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "failed", reason: "budget_exceeded" });
    expect(outcome.cost_usd).toBeCloseTo(0.6, 10);
    expect(outcome.error?.message).toContain("$0.6000");
  });

  it("cuts a call off mid-stream when it would cross max_tokens", async () => {
    const harness = new LoopHarness(server, { definition: makeDefinition({ limits: { max_tokens: 300 } }) });
    server.enqueue(textReply("word ".repeat(2_000), { chunkSize: 20, delayBetweenChunksMs: 2 }));
    const outcome = await harness.run();
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "budget_exceeded",
      error: { code: "BUDGET_EXCEEDED" },
    });
    expect(outcome.error?.message).toContain("cut off mid-stream");
    await expect.poll(() => server.chatRequests[0]?.closedByClient).toBe(true);
  });

  it("counts what an answer cut off past the size cap spent, then the fallback's answer", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({
        frontmatter: { fallback_models: ["second-model"] },
        limits: { max_tokens: 10_000_000 },
      }),
    });
    const over = MAX_ANSWER_CHARACTERS + 512 * 1024;
    server.enqueue(
      textReply("z".repeat(over), { chunkSize: 256 * 1024 }),
      textReply("done", { usage: { promptTokens: 10, completionTokens: 5 } }),
    );
    const outcome = await harness.run();
    expect(outcome).toMatchObject({ status: "completed" });
    // The cut-off answer, estimated at a quarter token a character, on top of the fallback's 5.
    expect(outcome.usage.completion_tokens).toBeGreaterThan(MAX_ANSWER_CHARACTERS / 4 + 5);
    expect(outcome.usage.completion_tokens).toBeLessThanOrEqual(over / 4 + 5);
  });

  it("resumes a run's budget from its checkpoint and reports only what it spends after", async () => {
    const harness = new LoopHarness(server, {
      definition: makeDefinition({ limits: { max_tokens: 1_000 } }),
    });
    const reported: number[] = [];
    harness.context.recordSpending = (usage) => reported.push(usage.total_tokens);
    const saved: number[] = [];
    harness.context.checkpoints = {
      resumeFrom: {
        run: "r_test",
        round: 1,
        messages: [
          { role: "system", content: "You are a test agent." },
          { role: "user", content: "Do the test task" },
        ],
        usage: { prompt_tokens: 600, completion_tokens: 300, total_tokens: 900 },
        cost_usd: 0,
        removed_tools: [],
        recent_calls: [],
        saved_at: new Date(0).toISOString(),
      },
      save: (checkpoint) => {
        saved.push(checkpoint.usage.total_tokens);
        return Promise.resolve();
      },
    };
    server.setDefaultReply(endlessToolCalls({ promptTokens: 100, completionTokens: 50 }));
    const outcome = await harness.run();
    // 900 before the cut + 150: the limit holds across the crash; the record, which kept the 900,
    // hears only the 150 (counting the checkpoint's again would double it).
    expect(outcome).toMatchObject({ status: "failed", reason: "budget_exceeded" });
    expect(outcome.usage.total_tokens).toBe(1_050);
    expect(server.chatRequests).toHaveLength(1);
    expect(reported).toEqual([150]);
    expect(saved.at(-1)).toBe(1_050);
  });
});
