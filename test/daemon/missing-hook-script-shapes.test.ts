import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { textReply, toolCallReply } from "../support/scripted-llm-server.js";
import { useScriptedDaemon } from "../support/scripted-daemon.js";
import { agentEvents, startRun, waitForRunEnd } from "./api-shapes.js";

const scripted = useScriptedDaemon({
  parent: realpathSync("/var/tmp"),
  agents: (project) => {
    // The reviewer's gates are named but not written yet.
    project.writeAgent("reviewer", {
      workdir: ".",
      tools: ["list_dir"],
      permissions: { allow: ["list_dir"] },
      hooks: {
        before_tool: [{ command: "python3 gates/gate.py" }, { command: "node gates/server" }],
      },
    });
    project.writeAgent("worker", {
      workdir: ".",
      tools: ["write_file"],
      permissions: { allow: ["write_file"] },
    });
  },
});

describe("another agent's missing hook script, made in a shape its interpreter also runs", () => {
  it("cannot be planted as a folder the interpreter runs, nor under a name Node adds", async () => {
    const { daemon, llm } = scripted;
    // python3 runs a folder `gate.py`'s __main__.py; node runs `server.js` for `server`, and a
    // folder `server`'s index.js.
    const planted = ["gates/gate.py/__main__.py", "gates/server.js", "gates/server/index.js"];
    for (const file of planted)
      llm.enqueue(toolCallReply({ name: "write_file", arguments: { path: file, content: "print(1)\n" } }));
    llm.enqueue(textReply("planted"));
    await waitForRunEnd(daemon, await startRun(daemon, "worker", "plant the reviewer's gates"));
    const results = (await agentEvents(daemon, "worker")).flatMap((event) =>
      event.type === "observation" ? [event.data as { ok: boolean; output: string }] : [],
    );
    expect(results).toEqual(
      planted.map(() =>
        expect.objectContaining({
          ok: false,
          output: expect.stringContaining("named by a hook, MCP server or CLI tool command"),
        }),
      ),
    );
    for (const file of [...planted, "gates/gate.py", "gates/server"])
      expect(existsSync(path.join(scripted.project.root, file)), file).toBe(false);
  });
});
