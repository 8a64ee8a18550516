import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAgentDefinitions } from "../../src/definitions/load-agent-definitions.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

let project: TempProject;
beforeEach(() => {
  project = createTempProject();
});
afterEach(() => project.remove());

describe("loadAgentDefinitions", () => {
  it("reads the agent and the agents it may call, transitively, and no other agent file", async () => {
    project.writeAgent("lead.md", agentText("Leads", "agents: [helper]\n"));
    project.writeAgent("team/helper.md", agentText("Helps", "agents: [checker]\n"));
    project.writeAgent("team/deep/checker.md", agentText("Checks"));
    project.writeAgent("other.md", "---\ndescription: [unclosed\n---\nbroken\n");
    const { snapshot, agentIds } = await loadAgentDefinitions(project.config, "lead");
    expect(snapshot.agents.map((status) => [status.id, status.valid]).sort()).toEqual([
      ["checker", true],
      ["helper", true],
      ["lead", true],
    ]);
    expect(agentIds.sort()).toEqual(["checker", "helper", "lead", "other"]);
  });

  it("reads the presets of the agents it loads, with their extends chain, and no other preset", async () => {
    project.writeAgent("writer.md", agentText("Writes", "preset: editor\n"));
    project.writePreset("editor.yaml", "role: Editor\nextends: base\n");
    project.writePreset("base.yaml", "role: Base\ncritical_rules: [Be exact]\n");
    project.writePreset("unrelated.yaml", "role: [unclosed\n");
    const { snapshot } = await loadAgentDefinitions(project.config, "writer");
    expect(snapshot.get("writer")?.presetChain).toEqual(["editor", "base"]);
    expect(snapshot.get("writer")?.systemPrompt).toContain("Be exact");
    expect(snapshot.presets.map((preset) => preset.name).sort()).toEqual(["base", "editor"]);
  });

  it("reports a missing preset with the nearest existing name", async () => {
    project.writeAgent("writer.md", agentText("Writes", "preset: editr\n"));
    project.writePreset("editor.yaml", "role: Editor\n");
    const { snapshot } = await loadAgentDefinitions(project.config, "writer");
    const status = snapshot.agents.find((agent) => agent.id === "writer");
    expect(status?.valid).toBe(false);
    expect(status?.errors[0]?.code).toBe("PRESET_NOT_FOUND");
    expect(status?.errors[0]?.hint).toContain('"editor"');
  });

  it("finds two files of one name, as the daemon does, and an unknown id loads nothing", async () => {
    project.writeAgent("a/twin.md", agentText("One"));
    project.writeAgent("b/twin.md", agentText("Two"));
    const twins = await loadAgentDefinitions(project.config, "twin");
    expect(twins.snapshot.get("twin")).toBeUndefined();
    expect(twins.snapshot.agents.some((status) => !status.valid)).toBe(true);
    const missing = await loadAgentDefinitions(project.config, "nobody");
    expect(missing.snapshot.agents).toEqual([]);
  });

  it("says a listed sub-agent without a file is missing", async () => {
    project.writeAgent("lead.md", agentText("Leads", "agents: [ghost]\n"));
    const { snapshot } = await loadAgentDefinitions(project.config, "lead");
    expect(snapshot.agents.find((status) => status.id === "lead")?.valid).toBe(false);
  });
});
