import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { DefinitionSnapshot } from "../../src/definitions/definition-snapshot.js";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { createTempProject } from "../support/temp-project.js";

const CORPUS = path.resolve(import.meta.dirname, "../fixtures/definitions/broken");

/** What a user must read about one broken file. */
interface Expected {
  file: string;
  code: string;
  /** Where the error points when that is not the agent file itself (a preset). */
  errorFile?: string;
  field?: string;
  line?: number;
  phrase: string;
}

const BROKEN_AGENTS: Expected[] = [
  { file: "bad-yaml.md", code: "DEFINITION_INVALID", line: 3, phrase: "invalid YAML: Nested mappings" },
  {
    file: "wrong-types.md",
    code: "DEFINITION_INVALID",
    field: "temperature",
    line: 4,
    phrase: "expected number",
  },
  {
    file: "unknown-preset.md",
    code: "PRESET_NOT_FOUND",
    field: "preset",
    line: 3,
    phrase: 'preset "writr" does not exist',
  },
  {
    file: "preset-cycle.md",
    code: "PRESET_CYCLE",
    errorFile: "presets/cycle-b.yml",
    field: "extends",
    line: 2,
    phrase: "preset cycle: cycle-a → cycle-b → cycle-a",
  },
  {
    file: "uses-bad-preset.md",
    code: "PRESET_INVALID",
    errorFile: "presets/bad-preset.yaml",
    field: "critical_rule",
    line: 2,
    phrase: 'did you mean "critical_rules"',
  },
  {
    file: "bad-cron.md",
    code: "DEFINITION_INVALID",
    field: "schedule",
    line: 4,
    phrase: "Invalid value for minute: 61",
  },
  {
    file: "bad-timezone.md",
    code: "DEFINITION_INVALID",
    field: "schedule.timezone",
    line: 5,
    phrase: 'unknown timezone "Mars/Olympus_Mons"',
  },
  { file: "team-a/twin.md", code: "DEFINITION_DUPLICATE_ID", phrase: "also used by team-b/twin.md" },
  { file: "team-b/twin.md", code: "DEFINITION_DUPLICATE_ID", phrase: "also used by team-a/twin.md" },
  { file: "Release Notes.md", code: "DEFINITION_INVALID", phrase: '"Release Notes" is not a valid agent id' },
  { file: "empty.md", code: "DEFINITION_INVALID", line: 1, phrase: "the file is empty" },
  { file: "binary.md", code: "DEFINITION_INVALID", phrase: "the file is binary" },
  { file: "huge.md", code: "DEFINITION_INVALID", phrase: "the file is 5.0 MB" },
  { file: "latin1.md", code: "DEFINITION_INVALID", line: 2, phrase: "not valid UTF-8" },
  {
    file: "no-description.md",
    code: "DEFINITION_INVALID",
    field: "description",
    phrase: "description is required",
  },
  {
    file: "cli-without-section.md",
    code: "DEFINITION_INVALID",
    field: "cli",
    phrase: "worker: cli needs a cli: section",
  },
  { file: "no-frontmatter.md", code: "DEFINITION_INVALID", line: 1, phrase: "the file has no frontmatter" },
  { file: "list-frontmatter.md", code: "DEFINITION_INVALID", line: 2, phrase: "the frontmatter is a list" },
  {
    file: "scalar-frontmatter.md",
    code: "DEFINITION_INVALID",
    line: 2,
    phrase: "the frontmatter is a string",
  },
  {
    file: "nested-unknown-key.md",
    code: "DEFINITION_INVALID",
    field: "limits.timout",
    line: 5,
    phrase: 'unknown key "timout" — did you mean "timeout"?',
  },
];

describe("the broken-input corpus", () => {
  let snapshot: DefinitionSnapshot;
  let root: string;

  beforeAll(async () => {
    const project = createTempProject();
    root = project.root;
    cpSync(CORPUS, root, { recursive: true });
    // 5 MB of otherwise valid Markdown, generated rather than committed.
    writeFileSync(
      path.join(root, "agents/huge.md"),
      `---\ndescription: huge\n---\n${"All work and no play. ".repeat(240_000)}`,
    );
    snapshot = await loadDefinitions(project.config);
  });

  function statusOf(file: string) {
    const status = snapshot.agents.find((agent) => agent.file === path.join(root, "agents", file));
    if (!status) throw new Error(`no status for ${file}`);
    return status;
  }

  it.each(BROKEN_AGENTS)("reports $file as $code, pointing at the problem", (expected) => {
    const status = statusOf(expected.file);
    expect(status.valid).toBe(false);
    expect(snapshot.get(status.id)).toBeUndefined();
    const [error] = status.errors;
    expect(error?.code).toBe(expected.code);
    expect(error?.file).toBe(path.join(root, expected.errorFile ?? path.join("agents", expected.file)));
    expect(error?.field).toBe(expected.field);
    if (expected.line !== undefined) expect(error?.line).toBe(expected.line);
    expect(error?.message).toContain(expected.phrase);
    expect(error?.hint).toBeTruthy();
  });

  it("still loads the valid agents next to the broken ones", () => {
    expect(statusOf("good.md").valid).toBe(true);
    expect(snapshot.get("good")?.systemPrompt).toContain("- Be brief");
    const valid = snapshot.agents.filter((agent) => agent.valid).map((agent) => agent.id);
    expect(valid).toEqual(["good", "unknown-key"]);
    expect(snapshot.agents).toHaveLength(BROKEN_AGENTS.length + valid.length);
  });

  it("warns about an unknown top-level key with a did-you-mean, and keeps the agent valid", () => {
    const status = statusOf("unknown-key.md");
    expect(status.valid).toBe(true);
    expect(status.warnings).toEqual([
      `${path.join(root, "agents/unknown-key.md")}:3 modle: unknown key "modle" is ignored — did you mean "model"?`,
    ]);
  });

  it("marks the presets of a cycle and a preset with an unknown key invalid, and the others valid", () => {
    const presets = Object.fromEntries(
      snapshot.presets.map((preset) => [preset.name, preset.errors.map((error) => error.code)]),
    );
    expect(presets).toEqual({
      "bad-preset": ["PRESET_INVALID"],
      "cycle-a": ["PRESET_CYCLE"],
      "cycle-b": ["PRESET_CYCLE"],
      writer: [],
    });
  });
});
