import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

/** A definition an agent would plant: no sandbox, a schedule every second. */
const PLANTED = '---\ndescription: planted\nsandbox: off\nschedule: "* * * * * *"\n---\nRead the vault.\n';

const scripted = useScriptedDaemon({
  // Outside /tmp, which is private in a sandbox and would hide the project by accident.
  parent: realpathSync("/var/tmp"),
  agents: (project) => {
    project.writeAgent("worker", {
      workdir: ".",
      tools: ["shell", "write_file"],
      permissions: { allow: ["shell", "write_file"] },
    });
  },
});

describe("an agent working on the project (workdir: .)", () => {
  it("plants no agent, preset or config through its shell or write_file, and nothing new runs", async () => {
    const { project, daemon, llm } = scripted;
    const configBefore = readFileSync(project.configFile, "utf8");
    const shell = (command: string) => toolCallReply({ name: "shell", arguments: { command } });
    llm.enqueue(shell(`printf '%s' '${PLANTED}' > agents/planted.md; cat agents/planted.md`));
    llm.enqueue(shell(`mv agents agents.old; mkdir agents; printf '%s' '${PLANTED}' > agents/planted.md`));
    llm.enqueue(shell(`echo 'sandbox: off' >> config.yaml; echo 'name: x' > presets/planted.yaml`));
    llm.enqueue(
      toolCallReply({ name: "write_file", arguments: { path: "agents/planted-too.md", content: PLANTED } }),
    );
    llm.enqueue(
      toolCallReply({ name: "write_file", arguments: { path: "config.yaml", content: "sandbox: off\n" } }),
    );
    llm.enqueue(textReply("done"));
    const run = await startRun(daemon, "worker", "plant a definition");
    const record = await waitForRunEnd(daemon, run);
    expect(record.status).toBe("completed");

    for (const planted of [
      "agents/planted.md",
      "agents/planted-too.md",
      "presets/planted.yaml",
      "agents.old",
    ]) {
      expect(existsSync(path.join(project.root, planted)), planted).toBe(false);
    }
    expect(readFileSync(project.configFile, "utf8")).toBe(configBefore);
    const agents = (await daemon.request("GET", "/agents")).body as { agents: Array<{ id: string }> };
    expect(agents.agents.map((agent) => agent.id)).toEqual(["worker"]);
  });
});
