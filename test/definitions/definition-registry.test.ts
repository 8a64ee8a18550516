import { mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DefinitionChange, DefinitionRegistry } from "../../src/definitions/definition-registry.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

const DEADLINE_MILLISECONDS = 10_000;

/** Resolves once `condition` holds, checking now and after every change the registry reports. */
function waitUntil(registry: DefinitionRegistry, condition: () => boolean): Promise<DefinitionChange[]> {
  const changes: DefinitionChange[] = [];
  return new Promise((resolve, reject) => {
    if (condition()) return resolve(changes);
    const timer = setTimeout(() => {
      unsubscribe();
      reject(
        new Error(
          `condition not met within ${DEADLINE_MILLISECONDS} ms; changes: ${JSON.stringify(changes)}`,
        ),
      );
    }, DEADLINE_MILLISECONDS);
    const unsubscribe = registry.onChange((change) => {
      changes.push(change);
      if (!condition()) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(changes);
    });
  });
}

describe("DefinitionRegistry", () => {
  let project: TempProject;
  let registry: DefinitionRegistry | undefined;

  afterEach(async () => {
    await registry?.close();
    registry = undefined;
    project.remove();
  });

  async function start(): Promise<DefinitionRegistry> {
    registry = await DefinitionRegistry.start(project.config);
    return registry;
  }

  it("serves the agents found at start and picks up a new file", async () => {
    project = createTempProject();
    project.writeAgent("alpha.md", agentText("first agent"));
    const live = await start();
    expect(live.get("alpha")?.description).toBe("first agent");

    const changes = waitUntil(live, () => live.get("beta") !== undefined);
    project.writeAgent("team/beta.md", agentText("second agent"));
    expect((await changes).flatMap((change) => change.agents)).toEqual(["beta"]);
    expect(live.snapshot().agents.map((agent) => agent.id)).toEqual(["alpha", "beta"]);
  });

  it("keeps the last valid definition serving while the file is invalid, then serves the fix", async () => {
    project = createTempProject();
    const file = project.writeAgent("alpha.md", agentText("version one"));
    const live = await start();
    const first = live.get("alpha");

    const broken = waitUntil(live, () => live.snapshot().agents[0]?.valid === false);
    writeFileSync(file, "---\ndescription: version two\nlimits: { timeout: soon }\n---\nbody\n");
    expect((await broken).at(-1)).toEqual({ agents: ["alpha"] });
    const status = live.snapshot().agents[0];
    expect(status?.errors[0]?.field).toBe("limits.timeout");
    expect(status?.errors[0]?.line).toBe(3);
    expect(status?.definition?.hash).toBe(first?.hash);
    expect(live.get("alpha")?.description).toBe("version one");

    const fixed = waitUntil(live, () => live.get("alpha")?.description === "version three");
    writeFileSync(file, agentText("version three"));
    await fixed;
    expect(live.get("alpha")?.hash).not.toBe(first?.hash);
    expect(live.snapshot().agents[0]?.valid).toBe(true);
  });

  it("removes a deleted agent and the agents of a deleted subfolder", async () => {
    project = createTempProject();
    const file = project.writeAgent("alpha.md", agentText("a"));
    project.writeAgent("team/beta.md", agentText("b"));
    project.writeAgent("team/gamma.md", agentText("c"));
    const live = await start();

    const removed = waitUntil(live, () => live.get("alpha") === undefined);
    unlinkSync(file);
    await removed;

    const folderRemoved = waitUntil(live, () => live.snapshot().agents.length === 0);
    rmSync(path.join(project.config.agents_dir, "team"), { recursive: true });
    await folderRemoved;
    expect(live.get("beta")).toBeUndefined();
  });

  it("follows an editor's save by temp file and rename, and half-written files", async () => {
    project = createTempProject();
    const file = project.writeAgent("alpha.md", agentText("original"));
    const live = await start();

    const saved = waitUntil(live, () => live.get("alpha")?.description === "saved by rename");
    const temporary = path.join(project.config.agents_dir, ".alpha.md.swp");
    writeFileSync(temporary, agentText("saved by rename"));
    renameSync(temporary, file);
    await saved;

    const written = waitUntil(live, () => live.get("alpha")?.description === "written in two parts");
    writeFileSync(file, "---\ndescription: writ");
    writeFileSync(file, agentText("written in two parts"));
    await written;
    expect(live.snapshot().agents[0]?.valid).toBe(true);
  });

  it("re-validates the agents using a preset when it changes, and only them", async () => {
    project = createTempProject();
    project.writePreset("writer.yaml", "role: Writer\ncritical_rules: [Be brief]\n");
    project.writeAgent("uses-preset.md", agentText("uses the preset", "preset: writer\n"));
    project.writeAgent("standalone.md", agentText("no preset"));
    const live = await start();
    const standalone = live.get("standalone");
    expect(live.get("uses-preset")?.systemPrompt).toContain("- Be brief");

    const changes = waitUntil(
      live,
      () => live.get("uses-preset")?.systemPrompt.includes("- Be kind") ?? false,
    );
    project.writePreset("writer.yaml", "role: Writer\ncritical_rules: [Be kind]\n");
    expect((await changes).flatMap((change) => change.agents)).toEqual(["uses-preset"]);
    expect(live.get("standalone")).toBe(standalone);

    const broken = waitUntil(live, () => live.snapshot().agents[1]?.valid === false);
    project.writePreset("writer.yaml", "role: Writer\ncritical_rule: [typo]\n");
    await broken;
    const [, status] = live.snapshot().agents;
    expect(status?.id).toBe("uses-preset");
    expect(status?.errors[0]?.code).toBe("PRESET_INVALID");
    expect(status?.errors[0]?.file).toBe(path.join(project.config.presets_dir, "writer.yaml"));
    expect(live.get("uses-preset")?.systemPrompt).toContain("- Be kind");
    expect(live.snapshot().presets[0]?.valid).toBe(false);
  });

  it("makes both files invalid when a second file takes an existing id, and recovers when it goes", async () => {
    project = createTempProject();
    project.writeAgent("alpha.md", agentText("top level"));
    const live = await start();

    const duplicated = waitUntil(live, () => live.snapshot().agents.every((agent) => !agent.valid));
    mkdirSync(path.join(project.config.agents_dir, "nested"));
    const twin = project.writeAgent("nested/alpha.md", agentText("nested"));
    await duplicated;
    const codes = live.snapshot().agents.map((agent) => agent.errors[0]?.code);
    expect(codes).toEqual(["DEFINITION_DUPLICATE_ID", "DEFINITION_DUPLICATE_ID"]);
    expect(live.get("alpha")?.description).toBe("top level");

    const recovered = waitUntil(live, () => live.snapshot().agents[0]?.valid === true);
    unlinkSync(twin);
    await recovered;
    expect(live.snapshot().agents).toHaveLength(1);
  });

  it("does not watch when asked not to", async () => {
    project = createTempProject();
    project.writeAgent("alpha.md", agentText("a"));
    registry = await DefinitionRegistry.start(project.config, { watch: false });
    expect(registry.snapshot().agents.map((agent) => agent.id)).toEqual(["alpha"]);
  });
});

describe("DefinitionRegistry without folders", () => {
  it("creates missing folders empty when watching, and loads what is dropped into them", async () => {
    const project = createTempProject();
    rmSync(project.config.agents_dir, { recursive: true });
    rmSync(project.config.presets_dir, { recursive: true });
    const registry = await DefinitionRegistry.start(project.config);
    try {
      expect(registry.snapshot().agents).toEqual([]);
      const appeared = waitUntil(registry, () => registry.get("late") !== undefined);
      writeFileSync(path.join(project.config.agents_dir, "late.md"), agentText("created after start"));
      await appeared;
    } finally {
      await registry.close();
      project.remove();
    }
  });
});
