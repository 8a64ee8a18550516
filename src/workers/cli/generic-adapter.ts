import type { CliToolConfig } from "../../config/config-schema.js";
import type { CliAdapter, CliInvocation, CliLineParser } from "./cli-adapter.js";
import { claudeAdapter } from "./claude-adapter.js";
import { codexAdapter } from "./codex-adapter.js";
import { geminiAdapter } from "./gemini-adapter.js";
import { createTextLineParser } from "./text-output.js";

const PLACEHOLDER_PATTERN = /\{(task|model|workdir)\}/g;

/**
 * A tool from config `cli_tools`: `command` with the `args` template (`{task}`, `{model}`,
 * `{workdir}` replaced; an argument that is exactly `{model}` is dropped when the agent sets no
 * model), then the agent's `cli.args`. `output` picks how stdout is read: `text` (stdout is the
 * answer) or a built-in tool's format.
 */
export function genericAdapter(tool: string, config: CliToolConfig): CliAdapter {
  const parserFactory = PARSER_FACTORIES[config.output];
  return {
    tool,
    command: config.command,
    environment: config.env,
    hasFinalLine: config.output !== "text",
    buildArguments: (invocation) => [...fillTemplate(config.args, invocation), ...invocation.extraArguments],
    createLineParser: parserFactory,
  };
}

const PARSER_FACTORIES: Record<CliToolConfig["output"], () => CliLineParser> = {
  text: createTextLineParser,
  claude: () => claudeAdapter().createLineParser(),
  gemini: () => geminiAdapter().createLineParser(),
  codex: () => codexAdapter().createLineParser(),
};

function fillTemplate(template: string[], invocation: CliInvocation): string[] {
  const values = { task: invocation.task, model: invocation.model ?? "", workdir: invocation.workdir };
  return template
    .filter((argument) => !(argument === "{model}" && invocation.model === undefined))
    .map((argument) =>
      argument.replace(PLACEHOLDER_PATTERN, (_match, name: keyof typeof values) => values[name]),
    );
}
