import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runValidate } from "../../../src/cli/commands/validate.js";
import { agentText, createTempProject, type TempProject } from "../../support/temp-project.js";

let project: TempProject;
afterEach(() => project.remove());

async function validate(config?: string) {
  let output = "";
  const exitCode = await runValidate(
    { json: true, cwd: project.root, environment: {}, ...(config ? { config } : {}) },
    (text) => (output += text),
  );
  return { exitCode, report: JSON.parse(output) as Record<string, unknown> };
}

function writeConfig(text: string): string {
  writeFileSync(
    path.join(project.root, "config.yaml"),
    `agents_dir: ./agents\npresets_dir: ./presets\n${text}`,
  );
  return "config.yaml";
}

describe("agentd validate and CLI workers", () => {
  it("refuses an unknown flag in cli_tools.<built-in>.args, naming its line", async () => {
    project = createTempProject();
    const config = writeConfig("cli_tools:\n  claude:\n    args: [--modle, sonnet]\n");
    const { exitCode, report } = await validate(config);
    expect(exitCode).toBe(1);
    expect(report).toMatchObject({
      config: {
        valid: false,
        errors: [
          {
            code: "CONFIG_INVALID",
            line: 5,
            message: expect.stringContaining("claude has no option --modle"),
          },
        ],
      },
    });
  });

  it("refuses a flag agentd sets itself, and an unknown one in an agent's cli.args", async () => {
    project = createTempProject();
    project.writeAgent(
      "coder.md",
      agentText("codes", "worker: cli\ncli:\n  tool: gemini\n  args: [--output-format, text, --yollo]\n"),
    );
    const { exitCode, report } = await validate();
    expect(exitCode).toBe(1);
    const [agent] = report.agents as Array<{ errors: Array<{ field: string; message: string }> }>;
    expect(agent?.errors.map((error) => [error.field, error.message])).toEqual([
      ["cli.args[0]", "--output-format is set by agentd for gemini; it cannot be given again"],
      ["cli.args[2]", "gemini has no option --yollo"],
    ]);
  });

  it("warns about each rule the agent's CLI cannot carry, naming the field", async () => {
    project = createTempProject();
    project.writeAgent(
      "coder.md",
      agentText(
        "codes",
        [
          "worker: cli",
          "cli: { tool: codex }",
          "tools: [shell]",
          'permissions: { deny: ["shell(echo *)"] }',
          "limits: { max_iterations: 5, max_cost_usd: 0.5 }",
          "",
        ].join("\n"),
      ),
    );
    const { exitCode, report } = await validate();
    expect(exitCode).toBe(0);
    const [agent] = report.agents as Array<{ warnings: string[] }>;
    const fields = (agent?.warnings ?? []).map((warning) => /\.md (\S+):/.exec(warning)?.[1]);
    expect(fields).toEqual(["tools", "permissions", "limits.max_iterations", "limits.max_cost_usd"]);
  });

  it("has nothing to warn about for claude, which takes every rule as a flag", async () => {
    project = createTempProject();
    project.writeAgent(
      "coder.md",
      agentText(
        "codes",
        'worker: cli\ncli: { tool: claude, model: sonnet }\ntools: [shell]\npermissions: { deny: ["shell(echo *)"] }\nlimits: { max_iterations: 5, max_cost_usd: 0.5 }\n',
      ),
    );
    const { report } = await validate();
    expect((report.agents as Array<{ warnings: string[] }>)[0]?.warnings).toEqual([]);
  });
});
