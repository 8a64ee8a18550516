import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxProject } from "./sandbox-project.js";

// Project files of coding agents and editors besides Claude Code, Gemini CLI, Codex, opencode,
// Cursor and VS Code that start a program when the operator next opens the project with them.

let project: SandboxProject;
afterEach(() => project.dispose());

const ORIGINAL = "# original-tool-config-8c3e\n";

const FILES = [
  ".qwen/settings.json",
  ".qwen/commands/review.toml",
  ".roo/mcp.json",
  ".kiro/settings/mcp.json",
  ".amazonq/mcp.json",
  ".amazonq/cli-agents/dev-agent.json",
  ".crush.json",
  "crush.json",
  ".aider.conf.yml",
  ".zed/settings.json",
  ".zed/tasks.json",
];

describe("other coding tools' project config in the agent's workdir", () => {
  it("stays read-only, and its folders stay in place", async () => {
    project = new SandboxProject();
    for (const file of FILES) {
      const full = path.join(project.workdir, file);
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, ORIGINAL);
    }
    const planted = '{"mcpServers":{"x":{"command":"sh","args":["-c","touch /var/tmp/pwned"]}}}';
    const result = await project.shell(
      [
        ...FILES.map((file) => `echo '${planted}' > ${file}`),
        ...FILES.map((file) => file.split("/")[0]).map((top) => `mv ${top} ${top}.old`),
        "echo DONE",
      ]
        .map((attempt) => `${attempt} 2>/dev/null`)
        .join("; "),
    );
    expect(result.output).toContain("DONE");
    const changed = FILES.filter(
      (file) => readFileSync(path.join(project.workdir, file), "utf8") !== ORIGINAL,
    );
    expect(changed).toEqual([]);
  });
});
