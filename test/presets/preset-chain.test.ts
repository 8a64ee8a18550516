import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

describe("preset chains", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("resolves extends root-first in the prompt and lists the chain from the agent's own preset", async () => {
    project = createTempProject();
    project.writePreset("base.yaml", "role: Base\ncritical_rules: [Rule from base]\n");
    project.writePreset("middle.yml", "extends: base\ncritical_rules: [Rule from middle]\n");
    project.writePreset("leaf.yaml", "role: Leaf\nextends: middle\ncritical_rules: [Rule from leaf]\n");
    project.writeAgent("agent.md", agentText("uses leaf", "preset: leaf\n"));
    const snapshot = await loadDefinitions(project.config);
    const definition = snapshot.get("agent");
    expect(definition?.presetChain).toEqual(["leaf", "middle", "base"]);
    expect(definition?.systemPrompt).toMatch(/^# Role: Leaf\n/);
    expect(definition?.systemPrompt).toContain("- Rule from base\n- Rule from middle\n- Rule from leaf");
    expect(snapshot.presets.every((preset) => preset.valid)).toBe(true);
  });

  it("makes only the agent naming a missing preset invalid", async () => {
    project = createTempProject();
    project.writePreset("writer.yaml", "role: Writer\n");
    project.writeAgent("ok.md", agentText("fine", "preset: writer\n"));
    project.writeAgent("missing.md", agentText("names a ghost", "preset: ghost\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.get("ok")).toBeDefined();
    const missing = snapshot.agents.find((agent) => agent.id === "missing");
    expect(missing?.errors.map((error) => [error.code, error.field, error.line, error.message])).toEqual([
      ["PRESET_NOT_FOUND", "preset", 3, 'preset "ghost" does not exist'],
    ]);
  });

  it("points at the preset whose extends names a missing parent", async () => {
    project = createTempProject();
    const child = project.writePreset("child.yaml", "role: Child\nextends: parent\n");
    project.writeAgent("agent.md", agentText("uses child", "preset: child\n"));
    const snapshot = await loadDefinitions(project.config);
    const [preset] = snapshot.presets;
    expect(preset?.errors[0]?.toJSON()).toMatchObject({
      code: "PRESET_NOT_FOUND",
      file: child,
      field: "extends",
      line: 2,
    });
    expect(snapshot.agents[0]?.errors[0]?.toJSON()).toMatchObject({ code: "PRESET_NOT_FOUND", file: child });
  });

  it("names a cycle in order and marks every preset on it invalid", async () => {
    project = createTempProject();
    project.writePreset("a.yaml", "extends: b\n");
    project.writePreset("b.yaml", "extends: c\n");
    project.writePreset("c.yaml", "extends: a\n");
    project.writePreset("outside.yaml", "extends: a\n");
    const snapshot = await loadDefinitions(project.config);
    const messages = Object.fromEntries(
      snapshot.presets.map((preset) => [preset.name, preset.errors[0]?.message]),
    );
    expect(messages).toEqual({
      a: "preset cycle: a → b → c → a",
      b: "preset cycle: b → c → a → b",
      c: "preset cycle: c → a → b → c",
      outside: "preset cycle: a → b → c → a",
    });
  });

  it("rejects an unknown preset key with a did-you-mean, and two files with one preset name", async () => {
    project = createTempProject();
    project.writePreset("typo.yaml", "role: R\nsucess_metrics: [done]\n");
    project.writePreset("twice.yaml", "role: One\n");
    project.writePreset("twice.yml", "role: Two\n");
    const snapshot = await loadDefinitions(project.config);
    const byFile = Object.fromEntries(
      snapshot.presets.map((preset) => [
        path.basename(preset.file),
        preset.errors.map((error) => error.message),
      ]),
    );
    expect(byFile).toEqual({
      "typo.yaml": ['unknown key "sucess_metrics" — did you mean "success_metrics"?'],
      "twice.yaml": ['preset name "twice" is also used by twice.yml'],
      "twice.yml": ['preset name "twice" is also used by twice.yaml'],
    });
  });
});
