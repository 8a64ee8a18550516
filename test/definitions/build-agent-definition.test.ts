import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { BUILTIN_TOOL_NAMES } from "../../src/tools/builtin/builtin-tool-names.js";
import { builtinTools } from "../../src/tools/builtin/builtin-tools.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

describe("building an agent definition", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("merges limits, permissions and approvals over the config and picks the model", async () => {
    project = createTempProject({
      config: {
        llm: { model: "config-model" },
        limits: { max_iterations: 10, timeout: "2m" },
        permissions: { deny: ["shell(rm *)"], allow: ["read_file"] },
        approvals: { timeout: "1m", on_timeout: "approve" },
      },
    });
    project.writeAgent(
      "custom.md",
      agentText(
        "custom",
        "limits: { max_iterations: 3 }\npermissions: { allow: [shell], ask: [write_file] }\napprovals: { timeout: 30s }\nmodel: agent-model\n",
      ),
    );
    project.writeAgent("plain.md", agentText("plain"));
    const snapshot = await loadDefinitions(project.config);
    const custom = snapshot.get("custom");
    expect(custom?.limits).toEqual({
      max_iterations: 3,
      max_tokens: 100_000,
      timeout: 120_000,
      max_cost_usd: 1,
      max_concurrent_runs: 1,
      max_agent_depth: 3,
    });
    expect(custom?.permissions).toEqual({
      allow: ["read_file", "shell"],
      ask: ["write_file"],
      deny: ["shell(rm *)"],
    });
    expect(custom?.approvals).toEqual({ timeout: 30_000, on_timeout: "approve" });
    expect(custom?.model).toBe("agent-model");
    expect(snapshot.get("plain")?.model).toBe("config-model");
    expect(snapshot.get("plain")?.name).toBe("plain");
  });

  it("resolves workdir against the project folder, defaulting to a workspace outside data_dir (which the sandbox hides)", async () => {
    project = createTempProject();
    project.writeAgent("nested/here.md", agentText("relative", "workdir: ./work/here\n"));
    project.writeAgent("default.md", agentText("default"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.get("here")?.workdir).toBe(path.join(project.root, "work/here"));
    expect(snapshot.get("default")?.workdir).toBe(path.join(project.root, ".agentd/workspaces/default"));
  });

  it("hashes the agent file and every preset file of its chain", async () => {
    project = createTempProject();
    const base = project.writePreset("base.yaml", "role: Base\n");
    const leaf = project.writePreset("leaf.yaml", "extends: base\n");
    const agent = project.writeAgent("agent.md", agentText("hashed", "preset: leaf\n"));
    const snapshot = await loadDefinitions(project.config);
    const expected = createHash("sha256");
    for (const file of [agent, leaf, base]) expected.update(readFileSync(file));
    expect(snapshot.get("agent")?.hash).toBe(expected.digest("hex"));
  });

  it("rejects a CLI tool the config does not know, and accepts one it does", async () => {
    project = createTempProject({ config: { cli_tools: { aider: { command: "aider" } } } });
    project.writeAgent("known.md", agentText("known", "worker: cli\ncli: { tool: aider }\n"));
    project.writeAgent("unknown.md", agentText("unknown", "worker: cli\ncli:\n  tool: cladue\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.get("known")?.frontmatter.cli?.tool).toBe("aider");
    const unknown = snapshot.agents.find((agent) => agent.id === "unknown");
    expect(unknown?.errors[0]?.toJSON()).toMatchObject({
      code: "DEFINITION_INVALID",
      field: "cli.tool",
      line: 5,
      message: 'unknown CLI tool "cladue"',
      hint: 'did you mean "claude"? Otherwise add cli_tools.cladue to the config',
    });
  });

  it("rejects an MCP tool whose server is not configured", async () => {
    project = createTempProject();
    project.writeAgent("mcp.md", agentText("mcp", "tools: [read_file, mcp:github/create_issue]\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.agents[0]?.errors[0]?.toJSON()).toMatchObject({ field: "tools[1]", line: 3 });
  });

  it("suggests the configured MCP server meant by a misspelt one", async () => {
    project = createTempProject({ config: { mcp_servers: { github: { command: "github-mcp" } } } });
    project.writeAgent("mcp.md", agentText("mcp", "tools: [mcp:githb/create_issue]\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.agents[0]?.errors[0]?.toJSON()).toMatchObject({
      message: expect.stringContaining('MCP server "githb" is not configured'),
      hint: expect.stringContaining('did you mean "github"'),
    });
  });

  it("rejects a tool that is neither built in nor MCP, suggesting the name meant", async () => {
    project = createTempProject();
    project.writeAgent("typo.md", agentText("typo", "tools: [shell, read_fiel]\n"));
    const snapshot = await loadDefinitions(project.config);
    expect(snapshot.agents[0]?.errors.map((error) => error.toJSON())).toEqual([
      expect.objectContaining({
        code: "DEFINITION_INVALID",
        message: 'unknown tool "read_fiel"',
        field: "tools[1]",
        line: 3,
        hint: 'did you mean "read_file"?',
      }),
    ]);
  });

  it("knows every built-in tool by the name the tool carries", () => {
    expect(builtinTools().map((tool) => tool.name)).toEqual([...BUILTIN_TOOL_NAMES]);
  });
});
