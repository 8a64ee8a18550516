import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentd } from "../support/agentd-cli.js";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";

const kit = useTestKit();
const LATE = "midrun-Secret-3f9a0c6e21";

describe("a secret set while a run is under way", () => {
  // The vault is read again (when it changed) before each model turn: what the run writes after
  // the value was set (the model's answer, its events, its result) is masked.
  it("is masked in what that run writes from its next model turn on", { timeout: 90_000 }, async () => {
    const { llm, project } = await kit.scriptedProject();
    llm.enqueue(
      toolCallReply({ name: "shell", arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }),
      textReply(`done: the deploy token is ${LATE}`),
    );
    project.writeAgent("deployer", { tools: ["shell"], permissions: { allow: ["shell"] } });
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "deployer", "deploy");
    // The run has started (and read the vault) once the model is asked; it then waits in its shell
    // call while the operator sets the secret, and goes on.
    await llm.waitForChatRequests(1);
    const set = await agentd(["secrets", "set", "late"], { cwd: project.root, input: LATE });
    expect(set.exitCode, set.stderr).toBe(0);
    const workdir = path.join(project.root, ".agentd", "workspaces", "deployer");
    mkdirSync(workdir, { recursive: true });
    writeFileSync(path.join(workdir, "go"), "");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    const holding = readdirSync(project.dataDirectory, { recursive: true, encoding: "utf8" }).filter(
      (file) =>
        !file.startsWith("vault") &&
        statSync(path.join(project.dataDirectory, file)).isFile() &&
        readFileSync(path.join(project.dataDirectory, file), "latin1").includes(LATE),
    );
    expect(holding).toEqual([]);
  });

  // A sub-agent's run is a new run: its first record, appended to the open-runs journal, is masked
  // with what the vault holds when it is queued, as a run queued through the API is.
  it("is masked in a sub-agent run started after it was set", { timeout: 90_000 }, async () => {
    const { llm, project } = await kit.scriptedProject();
    llm.enqueue(
      toolCallReply({ name: "shell", arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }),
      toolCallReply({ name: "agent__helper", arguments: { task: `deploy with ${LATE}` } }),
      textReply("deployed"),
      textReply("ok"),
    );
    project.writeAgent("helper", { description: "Deploys" });
    project.writeAgent("lead", { tools: ["shell"], permissions: { allow: ["shell"] }, agents: ["helper"] });
    const daemon = await kit.daemon(project.configFile);
    const run = await startRun(daemon, "lead", "deploy");
    await llm.waitForChatRequests(1);
    const set = await agentd(["secrets", "set", "late"], { cwd: project.root, input: LATE });
    expect(set.exitCode, set.stderr).toBe(0);
    const workdir = path.join(project.root, ".agentd", "workspaces", "lead");
    mkdirSync(workdir, { recursive: true });
    writeFileSync(path.join(workdir, "go"), "");
    expect(await waitForRunEnd(daemon, run)).toMatchObject({ status: "completed" });
    const journal = path.join(project.dataDirectory, "runs", "open");
    const childLines = readdirSync(journal)
      .flatMap((file) => readFileSync(path.join(journal, file), "utf8").split("\n"))
      .filter((line) => line.includes('"agent":"helper"'));
    expect(childLines.length).toBeGreaterThan(0);
    for (const line of childLines) expect(line).not.toContain(LATE);
  });
});
