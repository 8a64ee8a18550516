import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { startRun, waitForRunEnd } from "./api-shapes.js";

const GATE = "#!/bin/sh\n# the reviewer's gate: refuses every push\nexit 0\n";

const scripted = useScriptedDaemon({
  // Outside /tmp, which is private in a sandbox and would hide the project by accident.
  parent: realpathSync("/var/tmp"),
  agents: (project) => {
    // The reviewer's hook names a script that is not there yet: the agent file was written (or
    // pulled) first, the script lands after the daemon loaded the definitions.
    project.writeAgent("reviewer", {
      workdir: ".",
      tools: ["shell"],
      hooks: { before_tool: [{ command: "sh gates/reviewer-gate.sh" }] },
    });
    project.writeAgent("worker", {
      workdir: ".",
      tools: ["shell"],
      permissions: { allow: ["shell"] },
    });
  },
});

describe("an agent sharing the project with another agent's hook whose script came later", () => {
  // The other agents' hook commands are read once per set of definitions, but what they name is
  // looked up on each call where the calling sandbox could write it.
  it("cannot rewrite the script once it is there, though the definitions did not change", async () => {
    const { project, daemon, llm } = scripted;
    // A first call of the worker's: the policy (and its list of other agents' hook files) is made.
    llm.enqueue(toolCallReply({ name: "shell", arguments: { command: "true" } }));
    llm.enqueue(textReply("done"));
    const first = await startRun(daemon, "worker", "look around");
    expect((await waitForRunEnd(daemon, first)).status).toBe("completed");

    mkdirSync(path.join(project.root, "gates"), { recursive: true });
    const gate = path.join(project.root, "gates", "reviewer-gate.sh");
    writeFileSync(gate, GATE);
    llm.enqueue(
      toolCallReply({ name: "shell", arguments: { command: "printf 'exit 0\\n' > gates/reviewer-gate.sh" } }),
    );
    llm.enqueue(textReply("done"));
    const run = await startRun(daemon, "worker", "rewrite the reviewer's gate");
    expect((await waitForRunEnd(daemon, run)).status).toBe("completed");
    expect(readFileSync(gate, "utf8")).toBe(GATE);
  });
});
