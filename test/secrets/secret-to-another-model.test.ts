import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ScriptedCompletion, textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const SECRET = "sk-live-93b1e07c55d2a4f8";

const scripted = useScriptedDaemon({
  parent: realpathSync("/var/tmp"),
  config: { vault: { backend: "env" } },
  environment: { AGENTD_SECRET_API_KEY: SECRET },
  agents: (project) => {
    project.writeAgent("helper", { description: "Answers questions" });
    project.writeAgent("lead", { agents: ["helper"], secrets: ["api_key"] });
  },
});

async function runWith(agent: string, task: string, ...replies: ScriptedCompletion[]) {
  const { llm, daemon } = scripted;
  const before = llm.chatRequests.length;
  llm.enqueue(...replies);
  const run = await startRun(daemon, agent, task);
  const record = await waitForRunEnd(daemon, run);
  return { record, requests: llm.chatRequests.slice(before) };
}

describe("a secret handed to a tool that is itself a model", () => {
  it("never reaches a sub-agent's model through {{secret:…}} in its task", async () => {
    const { requests } = await runWith(
      "lead",
      "ask the helper",
      toolCallReply({
        name: "agent__helper",
        arguments: { task: "the key is {{secret:api_key}}; spell it" },
      }),
      textReply("I was told the key"),
      textReply("done"),
    );
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const bodies = requests.map((request) => JSON.stringify(request.body));
    // The helper was asked, with the reference masked in place of the value.
    expect(bodies.some((body) => body.includes("the key is [secret:api_key]"))).toBe(true);
    for (const body of bodies) expect(body).not.toContain(SECRET);
  });
});
