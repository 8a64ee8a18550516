import { describe, expect, it } from "vitest";
import {
  type RecordedRequest,
  type ScriptedReplyValue,
  textReply,
  toolCallReply,
} from "../support/scripted-llm-server.js";
import { agentEvents, listRuns, startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { waitFor } from "../support/wait-for.js";

/** The hostile agent calls every sub-agent it lists; every other run just answers. */
function reply(request: RecordedRequest): ScriptedReplyValue {
  const messages = request.body?.messages ?? [];
  const task = String(messages[1]?.content ?? "");
  const answered = messages.some((message) => message.role === "tool");
  if (task === "reach the others" && !answered)
    return toolCallReply([
      { name: "agent__switched", arguments: { task: "deploy" } },
      { name: "agent__frozen", arguments: { task: "deploy" } },
    ]);
  return textReply("done");
}

const scripted = useScriptedDaemon({
  reply,
  agents: (project) => {
    project.writeAgent("low", { agents: ["switched", "frozen"] });
    project.writeAgent("switched", { description: "Deploys (an operator switched it off)" });
    project.writeAgent("frozen", { description: "Deploys (off in its file)", enabled: false });
    // A follower that is off starts nothing when the hostile agent's run ends.
    project.writeAgent("follower", { enabled: false, triggers: [{ after: { agent: "low" } }] });
    project.writeAgent("switched-follower", { triggers: [{ after: { agent: "low" } }] });
    // Follows too and is on: once its run is there, the others had their chance.
    project.writeAgent("witness", { triggers: [{ after: { agent: "low" } }] });
  },
});

describe("agents that are switched off, reached from a hostile agent", { timeout: 90_000 }, () => {
  it("never run as its sub-agents nor as followers of its runs", async () => {
    for (const agent of ["switched", "switched-follower"])
      expect((await scripted.daemon.request("POST", `/agents/${agent}/disable`)).status).toBe(200);
    const run = await startRun(scripted.daemon, "low", "reach the others");
    expect(await waitForRunEnd(scripted.daemon, run)).toMatchObject({ status: "completed" });
    const observations = (await agentEvents(scripted.daemon, "low")).flatMap((event) =>
      event.type === "observation" && event.run === run
        ? [event.data as { ok: boolean; output: string }]
        : [],
    );
    expect(observations).toHaveLength(2);
    for (const observation of observations) {
      expect(observation.ok).toBe(false);
      expect(observation.output).toContain("is disabled");
    }
    expect(await listRuns(scripted.daemon, `?parent=${run}`)).toEqual([]);
    await waitFor(async () => (await listRuns(scripted.daemon, "?agent=witness")).length > 0, "the witness");
    // The switched-off follower's trigger met the run's end and started nothing.
    await waitFor(async () => {
      const { triggers } = (await scripted.daemon.request("GET", "/triggers")).body as {
        triggers: Array<{ agent: string; last_outcome: string | null }>;
      };
      const switched = triggers.find((trigger) => trigger.agent === "switched-follower");
      return switched === undefined || switched.last_outcome === "failed";
    }, "the switched-off follower's outcome");
    for (const agent of ["switched", "frozen", "follower", "switched-follower"])
      expect(await listRuns(scripted.daemon, `?agent=${agent}`)).toEqual([]);
  });
});
