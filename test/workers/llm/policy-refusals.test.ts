import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolHarness } from "../../support/tool-harness.js";
import { makeDefinition } from "../../support/make-definition.js";
import {
  startScriptedLlmServer,
  textReply,
  toolCallReply,
  type ScriptedLlmServer,
} from "../../support/scripted-llm-server.js";
import { LoopHarness } from "./loop-harness.js";

let server: ScriptedLlmServer;
let tools: ToolHarness;
beforeEach(async () => {
  server = await startScriptedLlmServer();
  tools = new ToolHarness();
});
afterEach(async () => {
  await server.close();
  tools.dispose();
});

describe("denied shell calls through the real executor", () => {
  it("do not remove shell: a later allowed command still runs", async () => {
    const definition = makeDefinition({
      workdir: tools.workdir,
      frontmatter: {
        tools: ["shell"],
        permissions: { allow: ["shell"], ask: [], deny: ["shell(rm *)"] },
      },
    });
    const harness = new LoopHarness(server, { definition, executor: tools.executor });
    const shell = (command: string) => toolCallReply({ name: "shell", arguments: { command } });
    server.enqueue(
      shell("rm -rf a"),
      shell("rm -rf b"),
      shell("rm -rf c"),
      shell("touch ran"),
      textReply("done"),
    );
    const outcome = await harness.run();

    expect(outcome).toMatchObject({ status: "completed", result: "done" });
    expect(existsSync(path.join(tools.workdir, "ran"))).toBe(true);
    const observations = harness.ofType("observation").map((event) => event.data.ok);
    expect(observations).toEqual([false, false, false, true]);
    expect(harness.ofType("warning")).toEqual([]);
  });
});
