import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/events/agent-event.js";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { agentEvents, getRun, listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { waitFor } from "../support/wait-for.js";

/** The task of the run a request belongs to, and the tool results it already holds. */
function taskOf(request: RecordedRequest): { task: string; toolResults: string[] } {
  const messages = request.body?.messages ?? [];
  return {
    task: String(messages[1]?.content ?? ""),
    toolResults: messages.flatMap((message) => (message.role === "tool" ? [String(message.content)] : [])),
  };
}

/** The scripted model: each task has its script, so runs in parallel get their own answers. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const { task, toolResults } = taskOf(request);
  const usage = { promptTokens: 50, completionTokens: 10 };
  switch (task) {
    case "plan the launch":
      return toolResults.length === 0
        ? toolCallReply({ name: "agent__helper", arguments: { task: "list risks" } }, { usage })
        : textReply(`plan ready; helper said: ${toolResults[0]}`, { usage });
    case "list risks":
      return textReply("risk: rain on launch day", { usage });
    case "count chairs":
      return textReply("42 chairs", { usage });
    case "fan out":
      return toolResults.length === 0
        ? toolCallReply(
            [
              { name: "agent__helper", arguments: { task: "list risks" } },
              { name: "agent__counter", arguments: { task: "count chairs" } },
            ],
            { usage },
          )
        : textReply(`both answered: ${toolResults.join(" | ")}`, { usage });
    case "delegate the wait":
      return toolCallReply({ name: "agent__sleeper", arguments: { task: "wait forever" } }, { usage });
    case "wait forever":
      return { type: "hang" };
    case "delegate the spending":
      return toolResults.length === 0
        ? toolCallReply({ name: "agent__spender", arguments: { task: "spend a lot" } }, { usage })
        : textReply("should not get here", { usage });
    case "spend a lot":
      return textReply("spent", { usage: { promptTokens: 900, completionTokens: 100 } });
    default:
      return { type: "http_error", status: 500, message: `no script for task ${task}` };
  }
}

// One run at a time daemon-wide: a sub-agent must still run while its parent holds that slot.
const scripted = useScriptedDaemon({
  reply,
  config: { concurrency: 1 },
  agents: (project) => {
    project.writeAgent("helper", { description: "Lists the risks of a plan" });
    project.writeAgent("counter", { description: "Counts things" });
    project.writeAgent("lead", { agents: ["helper"] });
    project.writeAgent("fan", { agents: ["helper", "counter"] });
    project.writeAgent("sleeper", {});
    project.writeAgent("boss", { agents: ["sleeper"] });
    project.writeAgent("spender", {});
    project.writeAgent("thrifty", { agents: ["spender"], limits: { max_tokens: 400 } });
    project.writeAgent("typo", { agents: ["helpr"] });
    project.writeAgent("ping", { agents: ["pong"] });
    project.writeAgent("pong", { agents: ["ping"] });
  },
});

const statusEvents = (events: AgentEvent[], run: string) =>
  events.filter((event) => event.type === "status" && event.run === run);

describe("sub-agents", () => {
  it("offers agent__<id> with the agent's description and answers with the child's result", async () => {
    const run = await startRun(scripted.daemon, "lead", "plan the launch");
    const parent = await waitForRunEnd(scripted.daemon, run);
    expect(parent).toMatchObject({
      status: "completed",
      result: "plan ready; helper said: risk: rain on launch day",
    });

    const children = await listRuns(scripted.daemon, `?parent=${run}`);
    expect(children).toHaveLength(1);
    const child = children[0] as RunRecord;
    expect(child).toMatchObject({
      agent: "helper",
      task: "list risks",
      status: "completed",
      parent_run: run,
      result: "risk: rain on launch day",
    });
    expect((await getRun(scripted.daemon, child.id)).parent_run).toBe(run);
    // The child's usage counts toward the parent's.
    expect(parent.usage.total_tokens).toBeGreaterThanOrEqual(3 * 60);

    const offered = scripted.llm.chatRequests.find((request) => taskOf(request).task === "plan the launch");
    const tool = offered?.body?.tools?.find((entry) => entry.function.name === "agent__helper");
    expect(tool?.function.description).toContain("Lists the risks of a plan");
    expect(tool?.function.parameters).toMatchObject({ properties: { task: { type: "string" } } });

    const childStatuses = statusEvents(await agentEvents(scripted.daemon, "helper"), child.id);
    expect(childStatuses.map((event) => event.data)).toEqual(
      expect.arrayContaining([expect.objectContaining({ status: "completed", parent_run: run })]),
    );
    expect(childStatuses.every((event) => (event.data as { parent_run?: string }).parent_run === run)).toBe(
      true,
    );
  });

  it("runs several sub-agent calls of one turn side by side under concurrency 1", async () => {
    const run = await startRun(scripted.daemon, "fan", "fan out");
    const parent = await waitForRunEnd(scripted.daemon, run);
    expect(parent).toMatchObject({
      status: "completed",
      result: "both answered: risk: rain on launch day | 42 chairs",
    });
    const children = await listRuns(scripted.daemon, `?parent=${run}`);
    expect(children.map((child) => child.agent).sort()).toEqual(["counter", "helper"]);
  });

  it("stops the child when the parent is stopped", async () => {
    const run = await startRun(scripted.daemon, "boss", "delegate the wait");
    const child = await waitFor(async () => {
      const [found] = await listRuns(scripted.daemon, `?parent=${run}`);
      return found?.status === "running" ? found : undefined;
    }, "the child to run");
    expect((await scripted.daemon.request("POST", `/runs/${run}/stop`)).status).toBe(200);
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({
      status: "stopped",
      reason: "user_stop",
    });
    expect(await waitForRunEnd(scripted.daemon, child.id)).toMatchObject({
      status: "stopped",
      reason: "user_stop",
    });
  });

  it("pauses and resumes the child with the parent", async () => {
    const run = await startRun(scripted.daemon, "boss", "delegate the wait");
    const child = await waitFor(async () => {
      const [found] = await listRuns(scripted.daemon, `?parent=${run}`);
      return found?.status === "running" ? found : undefined;
    }, "the child to run");
    expect((await scripted.daemon.request("POST", `/runs/${run}/pause`)).status).toBe(200);
    expect((await getRun(scripted.daemon, child.id)).status).toBe("paused");
    expect((await scripted.daemon.request("POST", `/runs/${run}/resume`)).status).toBe(200);
    expect((await getRun(scripted.daemon, child.id)).status).toBe("running");
    await scripted.daemon.request("POST", `/runs/${run}/stop`);
    expect(await waitForRunEnd(scripted.daemon, child.id)).toMatchObject({ status: "stopped" });
  });

  it("ends the parent budget_exceeded when its child spends what the parent had left", async () => {
    const run = await startRun(scripted.daemon, "thrifty", "delegate the spending");
    const parent = await waitForRunEnd(scripted.daemon, run);
    expect(parent).toMatchObject({ status: "failed", reason: "budget_exceeded" });
    expect(parent.usage.total_tokens).toBeGreaterThanOrEqual(1_000);
    const [child] = await listRuns(scripted.daemon, `?parent=${run}`);
    expect(child?.agent).toBe("spender");
  });

  it("refuses an unknown sub-agent with a did-you-mean, and a cycle", async () => {
    const typo = (await scripted.daemon.request("GET", "/agents/typo")).body as {
      valid: boolean;
      errors: string[];
    };
    expect(typo.valid).toBe(false);
    expect(typo.errors.join("\n")).toMatch(/unknown agent "helpr".*did you mean "helper"/s);
    for (const id of ["ping", "pong"]) {
      const agent = (await scripted.daemon.request("GET", `/agents/${id}`)).body as {
        valid: boolean;
        errors: string[];
      };
      expect(agent.valid).toBe(false);
      expect(agent.errors.join("\n")).toContain("cycle");
    }
  });
});
