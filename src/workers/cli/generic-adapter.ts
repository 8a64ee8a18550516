import type { CliToolConfig } from "../../config/config-schema.js";
import type { CliAdapter, CliInvocation, CliLineParser } from "./cli-adapter.js";
import { claudeAdapter } from "./claude-adapter.js";
import { codexAdapter } from "./codex-adapter.js";
import { geminiAdapter } from "./gemini-adapter.js";
import { genericRuleSupport } from "./cli-tool-rules.js";
import { createTextLineParser } from "./text-output.js";

const PLACEHOLDER_PATTERN = /\{(task|model|workdir|system_prompt)\}/g;
const DEFAULT_TEMPLATE = ["{task}"];

/**
 * A tool from config `cli_tools`: `command` with the `args` template (`{task}`, `{model}`,
 * `{workdir}`, `{system_prompt}` replaced; an argument that is exactly `{model}` is dropped when the
 * agent sets no `cli.model`), then the agent's `cli.args`. A template without `{system_prompt}`
 * gets the system prompt ahead of the task. `output` picks how stdout is read: `text` (stdout is
 * the answer) or a built-in tool's format.
 */
export function genericAdapter(tool: string, config: CliToolConfig): CliAdapter {
  const template = config.args ?? DEFAULT_TEMPLATE;
  return {
    tool,
    command: config.command ?? tool,
    defaultModel: undefined,
    environment: config.env,
    configArguments: template,
    hasFinalLine: config.output !== "text",
    ruleSupport: genericRuleSupport(config),
    prepare: (invocation) => ({
      arguments: [...fillTemplate(template, invocation), ...invocation.extraArguments],
      environment: {},
      files: {},
    }),
    createLineParser: PARSER_FACTORIES[config.output],
  };
}

const PARSER_FACTORIES: Record<CliToolConfig["output"], () => CliLineParser> = {
  text: createTextLineParser,
  claude: () => claudeAdapter().createLineParser(),
  gemini: () => geminiAdapter().createLineParser(),
  codex: () => codexAdapter().createLineParser(),
};

function fillTemplate(template: string[], invocation: CliInvocation): string[] {
  const systemPrompt = invocation.systemPrompt.trim();
  const promptInTemplate = template.some((argument) => argument.includes("{system_prompt}"));
  const task =
    promptInTemplate || systemPrompt === ""
      ? invocation.task
      : `${systemPrompt}\n\n# Task\n\n${invocation.task}`;
  const values = {
    task,
    model: invocation.model ?? "",
    workdir: invocation.workdir,
    system_prompt: systemPrompt,
  };
  return template
    .filter((argument) => !(argument === "{model}" && invocation.model === undefined))
    .map((argument) =>
      argument.replace(PLACEHOLDER_PATTERN, (_match, name: keyof typeof values) => values[name]),
    );
}
