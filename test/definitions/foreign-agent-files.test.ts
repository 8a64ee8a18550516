import { cp, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { runAgentCommand } from "../../src/cli/commands/run.js";
import { validateProject } from "../../src/cli/commands/validate.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { AgentDefinition } from "../../src/definitions/agent-definition.js";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { textReply } from "../support/scripted-llm-server.js";
import { captureRunIo, useRunProject } from "../cli/run-project.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/foreign-agents");

const project = useRunProject();
beforeEach(async () => {
  // A project's own Claude Code and opencode agents, as their tools keep them.
  await cp(FIXTURES, project.directory, { recursive: true });
  await writeFile(
    path.join(project.directory, "config.yaml"),
    [
      "llm:",
      `  base_url: ${project.server.url}`,
      "  api_key: test-key",
      "  model: scripted",
      "  retries: { max_attempts: 1 }",
      "  model_aliases: { haiku: scripted-small, anthropic/claude-sonnet-4-20250514: scripted-large }",
      "agents_dirs: [./.claude/agents, ./.opencode/agent]",
      `data_dir: ${path.join(project.directory, "data")}`,
      "log: { level: silent }",
    ].join("\n"),
  );
});

async function definitions(): Promise<Map<string, AgentDefinition>> {
  const { config } = loadConfig({ cwd: project.directory });
  const snapshot = await loadDefinitions(config);
  const invalid = snapshot.agents.filter((agent) => !agent.valid);
  expect(invalid.map((agent) => [agent.id, agent.errors.map((error) => error.describe())])).toEqual([]);
  return new Map(
    snapshot.agents.flatMap((agent) => (agent.definition ? [[agent.id, agent.definition]] : [])),
  );
}

const capture = () => captureRunIo();

describe("Claude Code and opencode agent files", () => {
  it("load from agents_dirs unchanged: all nine are valid", async () => {
    const loaded = await definitions();
    expect([...loaded.keys()].sort()).toEqual([
      "backend-architect",
      "code-reviewer",
      "code-simplifier",
      "debugger",
      "docs-writer",
      "issue-helper",
      "research",
      "review",
      "slice-owner",
    ]);
  });

  it("map Claude Code's tools, disallowedTools, maxTurns, permissionMode and models", async () => {
    const loaded = await definitions();
    const reviewer = loaded.get("code-reviewer");
    expect(reviewer?.frontmatter.tools).toEqual(["read_file", "search_files", "shell"]);
    // Reading needs no approval, as in Claude Code; the shell asks.
    expect(reviewer?.permissions.allow).toEqual(["read_file", "search_files"]);
    expect(reviewer?.model).toBe("scripted"); // inherit

    const architect = loaded.get("backend-architect");
    // No tools: every built-in tool.
    expect(architect?.frontmatter.tools).toEqual([
      "read_file",
      "write_file",
      "list_dir",
      "search_files",
      "shell",
      "http_request",
    ]);
    expect(architect?.model).toBe("scripted");
    expect(architect?.warnings.join("\n")).toMatch(/model "sonnet" has no entry in llm\.model_aliases/);

    const debuggerAgent = loaded.get("debugger");
    expect(debuggerAgent?.model).toBe("scripted-small");
    expect(debuggerAgent?.limits.max_iterations).toBe(12);
    expect(debuggerAgent?.frontmatter.tools).toEqual(["read_file", "write_file", "shell", "search_files"]);
    expect(debuggerAgent?.permissions).toMatchObject({
      allow: ["write_file", "read_file", "search_files"],
      deny: ["shell(rm*)", "shell(git push*)"],
    });
    expect(debuggerAgent?.warnings.join("\n")).toMatch(/color: ignored: display only/);

    const helper = loaded.get("issue-helper");
    // WebSearch and TodoWrite have no counterpart; the GitHub MCP server is not configured here.
    expect(helper?.frontmatter.tools).toEqual(["read_file", "search_files", "http_request"]);
    const helperWarnings = helper?.warnings.join("\n") ?? "";
    expect(helperWarnings).toMatch(/no agentd counterpart, left out: WebSearch, TodoWrite/);
    expect(helperWarnings).toMatch(
      /not in config mcp_servers: mcp:github\/get_issue, mcp:github\/add_issue_comment/,
    );
    expect(helperWarnings).toMatch(/model "claude-sonnet-4-5-20250929" has no entry in llm\.model_aliases/);
    expect(helperWarnings).toMatch(/skills: ignored/);
    expect(helperWarnings).toMatch(/mcpServers: ignored/);
  });

  it("map opencode's tool switches, permission, steps, models and a missing description", async () => {
    const loaded = await definitions();
    const review = loaded.get("review");
    expect(review?.frontmatter.tools).toEqual(["read_file", "list_dir", "search_files", "http_request"]);
    expect(review?.model).toBe("scripted-large");
    expect(review?.frontmatter.temperature).toBe(0.1);
    // `mode` is understood as opencode's, never "did you mean model".
    expect(review?.warnings.join("\n")).not.toMatch(/did you mean/);
    expect(review?.warnings.join("\n")).toMatch(/mode: ignored/);

    const research = loaded.get("research");
    // opencode allows what the file does not restrict; `edit: deny` takes writing away.
    expect(research?.frontmatter.tools).toEqual([
      "read_file",
      "list_dir",
      "search_files",
      "shell",
      "http_request",
    ]);
    expect(research?.permissions).toMatchObject({
      allow: ["read_file", "list_dir", "search_files", "shell", "http_request"],
      deny: ["read_file(*.env)", "read_file(*.env.*)", "write_file"],
    });

    const writer = loaded.get("docs-writer");
    expect(writer?.description).toBe("Writes and updates the project's documentation");
    expect(writer?.limits.max_iterations).toBe(8);
    // `"*": ask` written last wins in opencode (the last matching rule): every command asks.
    expect(writer?.permissions).toMatchObject({
      allow: ["read_file", "write_file", "list_dir", "search_files"],
      ask: [],
    });
    expect(writer?.warnings.join("\n")).toMatch(/"git status": allow is overridden by the later "\*": ask/);

    // `permissions:` (plural) and a dotted file name: code.simplifier.md.
    const simplifier = loaded.get("code-simplifier");
    expect(simplifier?.frontmatter.tools).toEqual(["read_file", "write_file", "search_files"]);
    expect(simplifier?.permissions.allow).toEqual(["read_file", "search_files"]);
    expect(simplifier?.permissions.deny).toContain("shell");
    expect(simplifier?.warnings.join("\n")).toMatch(/understood as opencode's "permission"/);

    const slice = loaded.get("slice-owner");
    expect(slice?.model).toBe("scripted");
    expect(slice?.permissions).toMatchObject({
      allow: ["read_file", "write_file", "list_dir", "search_files", "shell", "http_request"],
      deny: [
        "read_file(*.env)",
        "read_file(*.env.*)",
        "write_file(**/.git/**)",
        "write_file(**/*.lock)",
        "write_file(**/dist/**)",
      ],
    });
    expect(slice?.warnings.join("\n")).toMatch(/permission\.task: ignored/);
  });

  it("lists understood and ignored keys in agentd validate", async () => {
    const { report } = await validateProject({ cwd: project.directory, environment: {} });
    expect(report.ok).toBe(true);
    const review = report.agents.find((agent) => agent.id === "review");
    expect(review?.warnings.join("\n")).toMatch(
      /tools: understood as every built-in tool but write_file, shell/,
    );
  });

  it.each([
    ["code-reviewer", ["read_file", "search_files", "shell"]],
    ["review", ["read_file", "list_dir", "search_files", "http_request"]],
  ])("runs %s against the endpoint, offering the mapped tools", async (agent, tools) => {
    project.server.enqueue(textReply("Looks good."));
    const { io, output } = capture();
    const code = await runAgentCommand(
      { agent, task: "Review the last change", config: "config.yaml", cwd: project.directory },
      io,
    );
    expect({ code, stdout: output.stdout }).toEqual({ code: 0, stdout: "Looks good.\n" });
    const sent = project.server.chatRequests[0]?.body;
    expect(sent?.tools?.map((tool) => tool.function.name)).toEqual(tools);
    expect(sent?.model).toBe(agent === "review" ? "scripted-large" : "scripted");
  });
});
