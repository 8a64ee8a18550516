import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentSummary } from "../../src/api/api-services.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { waitFor } from "../support/wait-for.js";
import { runEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const NOTES = "the payroll agent's notes\n";

const scripted = useScriptedDaemon({
  parent: realpathSync("/var/tmp"),
  agents: (project) => {
    project.writeAgent("worker", {
      workdir: ".",
      tools: ["read_file"],
      permissions: { allow: ["read_file"] },
    });
  },
});

/** The worker reads `payroll/notes.txt`: whether it could, and what it was told. */
async function readNotes(): Promise<{ ok: boolean; output: string }> {
  const { daemon, llm } = scripted;
  llm.enqueue(toolCallReply({ name: "read_file", arguments: { path: "payroll/notes.txt" } }));
  llm.enqueue(textReply("done"));
  const run = await startRun(daemon, "worker", "read the payroll notes");
  expect((await waitForRunEnd(daemon, run)).status).toBe("completed");
  const observation = (await runEvents(daemon, run)).find((event) => event.type === "observation");
  return observation?.data as { ok: boolean; output: string };
}

describe("an agent added while the daemon runs", () => {
  // Every agent's workdir is hidden from the others: the lists are made once per set of
  // definitions, so a set with one more agent must make them again.
  it("has its workdir hidden from the other agents from their next call on", async () => {
    const { project, daemon } = scripted;
    mkdirSync(path.join(project.root, "payroll"));
    writeFileSync(path.join(project.root, "payroll", "notes.txt"), NOTES);
    expect(await readNotes()).toMatchObject({ ok: true, output: expect.stringContaining("payroll agent") });

    project.writeAgent("payroll", { workdir: "payroll", tools: ["read_file"] });
    await waitFor(async () => {
      const { agents } = (await daemon.request("GET", "/agents")).body as { agents: AgentSummary[] };
      return agents.some((agent) => agent.id === "payroll" && agent.valid);
    }, "the payroll agent to be loaded");
    const hidden = await readNotes();
    expect(hidden.ok).toBe(false);
    expect(hidden.output).not.toContain("payroll agent");
  });
});
