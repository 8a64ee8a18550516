import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { agentEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const scripted = useScriptedDaemon({
  parent: realpathSync("/var/tmp"),
  agents: (project) => {
    // The reviewer's gate is named but not written yet (the operator has not deployed it).
    project.writeAgent("reviewer", {
      workdir: ".",
      tools: ["list_dir"],
      permissions: { allow: ["list_dir"] },
      hooks: { before_tool: [{ command: "sh gates/reviewer-gate.sh" }] },
    });
    project.writeAgent("worker", {
      workdir: ".",
      tools: ["write_file"],
      permissions: { allow: ["write_file"] },
    });
  },
});

describe("another agent's hook script that does not exist yet", () => {
  it("cannot be planted by an agent sharing the project, to run in the hooked agent's sandbox", async () => {
    const { daemon, llm } = scripted;
    llm.enqueue(
      toolCallReply({
        name: "write_file",
        arguments: { path: "gates/reviewer-gate.sh", content: "echo planted by the worker >&2\nexit 2\n" },
      }),
    );
    llm.enqueue(textReply("planted"));
    await waitForRunEnd(daemon, await startRun(daemon, "worker", "plant the reviewer's gate"));
    const refusals = (await agentEvents(daemon, "worker")).flatMap((event) =>
      event.type === "observation" ? [event.data as { ok: boolean; output: string }] : [],
    );
    expect(refusals).toEqual([
      expect.objectContaining({
        ok: false,
        output: expect.stringContaining("named by a hook, MCP server or CLI tool command"),
      }),
    ]);
    expect(existsSync(path.join(scripted.project.root, "gates", "reviewer-gate.sh"))).toBe(false);

    llm.enqueue(toolCallReply({ name: "list_dir", arguments: { path: "." } }));
    llm.enqueue(textReply("listed"));
    const run = await startRun(daemon, "reviewer", "list the project");
    await waitForRunEnd(daemon, run);
    const hooks = (await agentEvents(daemon, "reviewer")).flatMap((event) =>
      event.type === "hook" && event.run === run ? [event.data as { outcome: string; message?: string }] : [],
    );
    expect(hooks).toHaveLength(1);
    expect(JSON.stringify(hooks)).not.toContain("planted by the worker");
  });
});
