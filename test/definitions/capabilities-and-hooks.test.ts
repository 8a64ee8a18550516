import { afterEach, describe, expect, it } from "vitest";
import { loadDefinitions } from "../../src/definitions/load-definitions.js";
import { hookAppliesTo } from "../../src/hooks/resolved-hook.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

describe("capabilities and hooks in agent definitions", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("narrows tools, sub-agents and the sandbox to the capability mode, warning about what it removes", async () => {
    project = createTempProject({ config: { sandbox: { allow_unsandboxed: ["open"] } } });
    project.writeAgent(
      "reader.md",
      agentText(
        "reader",
        "capabilities: read-only\ntools: [read_file, write_file, shell, http_request, ask_human]\nagents: [helper]\n",
      ),
    );
    project.writeAgent("quiet.md", agentText("quiet", "capabilities: no-tools\ntools: [read_file]\n"));
    project.writeAgent(
      "open.md",
      agentText("open", "sandbox: off\ncapabilities: read-only\ntools: [shell]\n"),
    );
    project.writeAgent("helper.md", agentText("helper", "tools: [write_file]\n"));
    const snapshot = await loadDefinitions(project.config);

    const reader = snapshot.get("reader");
    expect(reader?.capabilities).toBe("read-only");
    expect(reader?.frontmatter.tools).toEqual(["read_file", "http_request", "ask_human"]);
    expect(reader?.frontmatter.agents).toEqual([]);
    expect(reader?.sandbox.mode).toBe("read-only");
    expect(reader?.warnings.join("\n")).toMatch(/capabilities: read-only removes write_file, shell/);
    expect(reader?.warnings.join("\n")).toMatch(/removes the sub-agents helper/);

    const quiet = snapshot.get("quiet");
    expect(quiet?.frontmatter.tools).toEqual([]);
    expect(quiet?.sandbox.mode).toBe("read-only");
    expect(quiet?.warnings.join("\n")).toMatch(/capabilities: no-tools removes read_file/);

    const open = snapshot.get("open");
    expect(open?.sandbox.mode).toBe("off");
    expect(open?.warnings.join("\n")).toMatch(/nothing keeps a CLI worker or a hook from writing/);

    const helper = snapshot.get("helper");
    expect(helper?.capabilities).toBe("full");
    expect(helper?.frontmatter.tools).toEqual(["write_file"]);
    expect(helper?.sandbox.mode).toBe("workspace-write");
  });

  it("resolves config hooks before the agent's, with their timeouts, and reads agentd's hooks as agentd's", async () => {
    project = createTempProject({ config: { hooks: { timeout: "5s", before_tool: ["./audit.sh"] } } });
    project.writeAgent(
      "hooked.md",
      agentText(
        "hooked",
        "hooks:\n  before_tool: { command: ./check.sh, timeout: 2s }\n  on_run_end: cat > end.json\n",
      ),
    );
    const snapshot = await loadDefinitions(project.config);
    const hooked = snapshot.get("hooked");
    expect(hooked?.warnings).toEqual([]);
    expect(hooked?.hooks).toEqual([
      { point: "before_tool", command: "./audit.sh", timeout: 5_000, source: "config" },
      { point: "before_tool", command: "./check.sh", timeout: 2_000, source: "agent" },
      { point: "on_run_end", command: "cat > end.json", timeout: 5_000, source: "agent" },
    ]);
  });

  it("limits a tool hook to the tools it names, a trailing * matching a prefix, and refuses tools at on_run_end", async () => {
    project = createTempProject();
    project.writeAgent(
      "picky.md",
      agentText("picky", 'hooks:\n  before_tool: { command: ./check.sh, tools: [shell, "mcp:github/*"] }\n'),
    );
    project.writeAgent(
      "wrong.md",
      agentText("wrong", "hooks:\n  on_run_end: { command: x, tools: [shell] }\n"),
    );
    const snapshot = await loadDefinitions(project.config);
    const [hook] = snapshot.get("picky")?.hooks ?? [];
    expect(hook?.tools).toEqual(["shell", "mcp:github/*"]);
    const applies = (tool: string) => (hook ? hookAppliesTo(hook, tool) : false);
    expect(["shell", "mcp:github/create_issue", "write_file", "mcp:gitlab/x"].map(applies)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const wrong = snapshot.agents.find((agent) => agent.id === "wrong");
    expect(wrong?.valid).toBe(false);
  });

  it("reads Claude Code's permissionMode: plan as capabilities: read-only, and ignores its hooks", async () => {
    project = createTempProject();
    project.writeAgent(
      "planner.md",
      agentText(
        "planner",
        "tools: Read, Write, Bash\npermissionMode: plan\nhooks:\n  PreToolUse: [{ matcher: Bash }]\n",
      ),
    );
    const planner = (await loadDefinitions(project.config)).get("planner");
    expect(planner?.capabilities).toBe("read-only");
    expect(planner?.frontmatter.tools).toEqual(["read_file"]);
    expect(planner?.sandbox.mode).toBe("read-only");
    expect(planner?.hooks).toEqual([]);
    expect(planner?.warnings.join("\n")).toMatch(/hooks: ignored/);
  });
});
