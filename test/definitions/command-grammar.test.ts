import { afterEach, describe, expect, it, vi } from "vitest";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

/** The definitions' load and the sandbox's reading of commands, as fresh modules: no grammar loaded yet. */
async function freshModules() {
  vi.resetModules();
  const { loadDefinitions } = await import("../../src/definitions/load-definitions.js");
  const { scriptCandidates } = await import("../../src/sandbox/script-candidates.js");
  return { loadDefinitions, read: (command: string) => scriptCandidates(command, "/srv/project") };
}

describe("the bash grammar the sandbox reads hook commands with", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("is loaded with the definitions when some agent has a hook", async () => {
    project = createTempProject();
    project.writeAgent(
      "gated.md",
      agentText("gated", "hooks:\n  before_tool:\n    - command: sh gates/gate.sh\n"),
    );
    const { loadDefinitions, read } = await freshModules();
    await loadDefinitions(project.config);
    expect(read("sh gates/gate.sh")).toEqual({
      paths: ["/srv/project/gates/gate.sh"],
      names: [],
      onPath: [],
      resolved: [],
    });
  });

  it("is not loaded for definitions without a command to read; the sandbox then rules nothing out", async () => {
    project = createTempProject();
    project.writeAgent("plain.md", agentText("plain", "tools: [read_file]\n"));
    const { loadDefinitions, read } = await freshModules();
    await loadDefinitions(project.config);
    expect(read("sh gates/gate.sh")).toEqual({
      paths: [],
      names: ["sh", "gate.sh"],
      onPath: [],
      resolved: [],
    });
  });
});
