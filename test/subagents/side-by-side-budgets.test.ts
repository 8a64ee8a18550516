import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";

const PARENT_MAX_TOKENS = 2_000;
const CHILDREN = 4;
/** What each model call reports using: a child keeps calling until its budget stops it. */
const CALL_TOKENS = 300;
/** So many calls in one answer that each child's part of the budget is too small for any model call. */
const WIDE = 80;

function taskOf(request: RecordedRequest): { task: string; toolResults: number } {
  const messages = request.body?.messages ?? [];
  return {
    task: String(messages[1]?.content ?? ""),
    toolResults: messages.filter((message) => message.role === "tool").length,
  };
}

/** A hostile parent fans out; each child spends round after round for as long as it may. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const { task, toolResults } = taskOf(request);
  const usage = { promptTokens: CALL_TOKENS - 50, completionTokens: 50 };
  if (task === "fan out" || task === "fan out wide") {
    const count = task === "fan out" ? CHILDREN : WIDE;
    return toolResults === 0
      ? toolCallReply(
          Array.from({ length: count }, (_, index) => ({
            name: "agent__burner",
            arguments: { task: `burn ${index}` },
          })),
          { usage: { promptTokens: 50, completionTokens: 10 } },
        )
      : textReply("done", { usage: { promptTokens: 50, completionTokens: 10 } });
  }
  if (task.startsWith("burn "))
    return toolResults < 20
      ? toolCallReply({ name: "list_dir", arguments: { path: "." } }, { usage })
      : textReply("burnt", { usage });
  return { type: "http_error", status: 500, message: `no script for task ${task}` };
}

const scripted = useScriptedDaemon({
  reply,
  config: { concurrency: 8 },
  agents: (project) => {
    const frontmatter = {
      description: "Spends tokens",
      tools: ["list_dir"],
      permissions: { allow: ["list_dir"] },
      limits: { max_concurrent_runs: WIDE },
    };
    // A prompt of about 150 tokens, as real agents have.
    const prompt = "Look through the folder and report what you find, one line per entry. ".repeat(8);
    project.writeAgent("burner.md", `---\n${stringify(frontmatter)}---\n${prompt}\n`);
    project.writeAgent("fanner", { agents: ["burner"], limits: { max_tokens: PARENT_MAX_TOKENS } });
  },
});

describe("sub-agent calls that run side by side", { timeout: 90_000 }, () => {
  it("share what is left of the parent's budget instead of each getting all of it", async () => {
    const run = await startRun(scripted.daemon, "fanner", "fan out");
    const parent = await waitForRunEnd(scripted.daemon, run);
    const children = await listRuns(scripted.daemon, `?parent=${run}`);
    expect(children).toHaveLength(CHILDREN);
    const spentByChildren = children.reduce((sum, child) => sum + child.usage.total_tokens, 0);
    // Each child may pass its part by the one call that crossed it, no more.
    expect(spentByChildren).toBeLessThanOrEqual(PARENT_MAX_TOKENS + CHILDREN * CALL_TOKENS);
    expect(parent).toMatchObject({ status: "failed", reason: "budget_exceeded" });
  });

  it("start no model call for a child whose part is smaller than its prompt", async () => {
    const run = await startRun(scripted.daemon, "fanner", "fan out wide");
    await waitForRunEnd(scripted.daemon, run);
    const children = await listRuns(scripted.daemon, `?parent=${run}`);
    expect(children).toHaveLength(WIDE);
    const spentByChildren = children.reduce((sum, child) => sum + child.usage.total_tokens, 0);
    expect(spentByChildren).toBeLessThanOrEqual(PARENT_MAX_TOKENS);
    const childCalls = scripted.llm.chatRequests.filter((request) =>
      taskOf(request).task.startsWith("burn "),
    );
    expect(childCalls.length).toBeLessThan(WIDE);
  });
});
