import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/config-schema.js";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";

const root = path.resolve(import.meta.dirname, "../..");

describe("the shipped examples", () => {
  it("load as valid agents and presets against the default config", async () => {
    const config = {
      ...ConfigSchema.parse({}),
      agents_dir: path.join(root, "agents"),
      presets_dir: path.join(root, "presets"),
      data_dir: path.join(root, "data"),
    };
    const snapshot = await loadDefinitions(config);
    const problems = [...snapshot.agents, ...snapshot.presets].flatMap((status) =>
      status.errors.map((error) => error.describe()),
    );
    expect(problems).toEqual([]);
    expect(snapshot.agents.flatMap((agent) => agent.warnings)).toEqual([]);
    expect(snapshot.agents.map((agent) => agent.id)).toEqual(
      expect.arrayContaining(["dependency-digest", "pr-reviewer", "issue-triager", "security-audit"]),
    );
    expect(snapshot.presets.map((preset) => preset.name)).toEqual(
      expect.arrayContaining(["security-analyst", "technical-writer", "code-reviewer"]),
    );
    const reviewer = snapshot.get("pr-reviewer");
    expect(reviewer?.presetChain).toEqual(["code-reviewer", "base-reviewer"]);
    expect(reviewer?.workdir).toBe(path.join(root, "workspace/repo"));
    expect(reviewer?.frontmatter.cli).toMatchObject({
      tool: "claude",
      fallback: "llm",
      idle_timeout: 300_000,
    });
    const digest = snapshot.get("dependency-digest");
    expect(digest?.frontmatter.schedule).toMatchObject({ cron: "30 8 * * 1-5", timezone: "Europe/Berlin" });
    expect(snapshot.get("issue-triager")?.frontmatter.secrets).toEqual(["github_token"]);
    // A newcomer who only looks around pays for nothing: the scheduled examples wait to be enabled.
    const scheduled = snapshot.agents.filter((agent) => agent.definition?.frontmatter.schedule);
    expect(scheduled.map((agent) => [agent.id, agent.definition?.frontmatter.enabled])).toEqual([
      ["dependency-digest", false],
      ["issue-triager", false],
    ]);
  });
});
