import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatAgents, listAgentsOffline } from "../../src/cli/commands/agents.js";
import { runValidate } from "../../src/cli/commands/validate.js";
import { SandboxHost } from "../../src/sandbox/sandbox-host.js";
import { agentText, createTempProject, type TempProject } from "../support/temp-project.js";

async function validate(project: TempProject, options: { json?: boolean; config?: string } = {}) {
  let output = "";
  const exitCode = await runValidate({ ...options, cwd: project.root, environment: {} }, (text) => {
    output += text;
  });
  return { exitCode, output };
}

describe("agentd validate", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("exits 0 and prints one JSON object when everything is valid", async () => {
    project = createTempProject();
    project.writePreset("writer.yaml", "role: Writer\n");
    project.writeAgent("notes.md", agentText("writes notes", "preset: writer\n"));
    const { exitCode, output } = await validate(project, { json: true });
    expect(exitCode).toBe(0);
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(output)).toEqual({
      ok: true,
      agents: [
        {
          id: "notes",
          file: path.join(project.root, "agents/notes.md"),
          valid: true,
          errors: [],
          warnings: [],
        },
      ],
      presets: [
        { name: "writer", file: path.join(project.root, "presets/writer.yaml"), valid: true, errors: [] },
      ],
      config: { file: project.configFile, valid: true, errors: [] },
      // Looked up on the PATH of the environment given (none here): whether it works is printed.
      sandbox: expect.objectContaining({ default_mode: "workspace-write" }),
    });
  });

  it("exits 1 and lists each invalid item as file:line field: message — hint, with warnings", async () => {
    project = createTempProject();
    project.writeAgent("good.md", agentText("fine", "modle: x\n"));
    project.writeAgent("bad.md", agentText("bad schedule", 'schedule: "every day"\n'));
    project.writePreset("broken.yaml", "role: [unclosed\n");
    const { exitCode, output } = await validate(project);
    expect(exitCode).toBe(1);
    expect(output).toContain("presets: 0 valid, 1 invalid\nagents: 1 valid, 1 invalid");
    expect(output).toContain(
      '✗ agent bad (agents/bad.md)\n  agents/bad.md:3 schedule: cron "every day" has 2 fields',
    );
    expect(output).toContain("— write a cron expression such as");
    expect(output).toMatch(
      /✗ preset broken \(presets\/broken.yaml\)\n {2}presets\/broken.yaml:\d: invalid YAML/,
    );
    expect(output).toContain(
      'warnings:\n  agents/good.md:3 modle: unknown key "modle" is ignored — did you mean "model"?',
    );
    expect(output.trim().split("\n").at(-1)).toMatch(/^invalid:/);

    const json = JSON.parse((await validate(project, { json: true })).output);
    expect(json.ok).toBe(false);
    expect(json.agents.find((agent: { id: string }) => agent.id === "bad").errors[0]).toMatchObject({
      code: "DEFINITION_INVALID",
      field: "schedule",
      line: 3,
    });
  });

  it("exits 1 on an invalid config, naming its line, without checking the folders", async () => {
    project = createTempProject();
    const file = path.join(project.root, "config.yaml");
    writeFileSync(file, "agents_dir: ./agents\nconcurency: 2\n");
    const { exitCode, output } = await validate(project, { json: true, config: "config.yaml" });
    expect(exitCode).toBe(1);
    expect(JSON.parse(output)).toMatchObject({
      ok: false,
      agents: [],
      config: { file, valid: false, errors: [{ code: "CONFIG_INVALID", line: 2, field: "concurency" }] },
    });
    const human = await validate(project, { config: "config.yaml" });
    expect(human.output).toContain("config.yaml:2 concurency: unknown key");
  });

  it("warns of a {{secret:…}} on a command line it starts, which every user of the machine can read", async () => {
    project = createTempProject({
      config: {
        mcp_servers: {
          github: { command: "github-server", args: ["--token", "{{secret:github_token}}"] },
          tidy: { command: "tidy-server", env: { TOKEN: "{{secret:tidy_token}}" } },
        },
        cli_tools: { claude: { args: ["--settings={{ secret:claude_settings }}"] } },
      },
    });
    const { output } = await validate(project);
    expect(output).toContain(
      "mcp_servers.github.command/args holds {{secret:github_token}}: a command line is readable by every user of this machine (ps) while it runs; pass the secret in mcp_servers.github.env instead",
    );
    expect(output).toContain("cli_tools.claude.command/args holds {{secret:claude_settings}}");
    // A secret in env is where it belongs: no warning.
    expect(output).not.toContain("mcp_servers.tidy");
  });

  it("accepts the shipped config.example.yaml with the example agents and presets", async () => {
    project = createTempProject();
    const root = path.resolve(import.meta.dirname, "../..");
    let output = "";
    const exitCode = await runValidate(
      { config: "config.example.yaml", json: true, cwd: root, environment: {} },
      (text) => (output += text),
    );
    expect(JSON.parse(output).agents.filter((agent: { valid: boolean }) => !agent.valid)).toEqual([]);
    expect(exitCode).toBe(0);
  });
});

describe("agentd agents (offline)", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("lists id, name, validity, worker, schedule and description, as a table or JSON lines", async () => {
    project = createTempProject();
    project.writeAgent(
      "digest.md",
      agentText(
        "daily digest",
        'name: Digest\nschedule: { cron: "0 9 * * *", timezone: Europe/Berlin }\ntask: go\n',
      ),
    );
    project.writeAgent("broken.md", "no frontmatter\n");
    const listings = await listAgentsOffline(project.config);
    const lines = formatAgents(listings, true, project.root)
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toMatchObject([
      {
        id: "broken",
        name: "broken",
        valid: false,
        worker: null,
        schedule: null,
        errors: [{ code: "DEFINITION_INVALID" }],
      },
      {
        id: "digest",
        name: "Digest",
        valid: true,
        worker: "llm",
        schedule: "0 9 * * * (Europe/Berlin)",
        description: "daily digest",
      },
    ]);
    const table = formatAgents(listings, false, project.root).split("\n");
    expect(table[0]).toMatch(/^ID +NAME +STATUS +WORKER +SCHEDULE +DESCRIPTION$/);
    expect(table[1]).toMatch(/^broken +broken +invalid \(agents\/broken.md\) +- +on demand +-$/);
    expect(table[2]).toMatch(/^digest +Digest +valid +llm +0 9 \* \* \* \(Europe\/Berlin\) +daily digest$/);
  });
});

/** Every file and folder under `root`, relative, sorted. */
function tree(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" }).sort();
}

describe("agentd validate on a project with a stdio MCP server", () => {
  let project: TempProject;
  afterEach(() => project.remove());

  it("changes nothing in the project: the empty node_modules above the server's script are the daemon's to make", async () => {
    project = createTempProject({
      config: { mcp_servers: { tool: { command: "node", args: ["./servers/tool/server.mjs"] } } },
    });
    mkdirSync(path.join(project.root, "servers", "tool"), { recursive: true });
    writeFileSync(path.join(project.root, "servers", "tool", "server.mjs"), "// an MCP server\n");
    project.writeAgent("notes.md", agentText("writes notes"));
    const before = tree(project.root);
    const { exitCode, output } = await validate(project);
    expect(output).not.toContain("✗");
    expect(exitCode).toBe(0);
    expect(tree(project.root)).toEqual(before);
    // Where a sandbox is prepared (the daemon, agentd run), they are made, to be bound read-only.
    new SandboxHost({ config: project.config, configFile: project.configFile });
    const made = tree(project.root).filter((entry) => !before.includes(entry));
    expect(made).toEqual(["node_modules", path.join("servers", "node_modules")]);
  });
});
