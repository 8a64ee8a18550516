import { z } from "zod";
import type { BuiltInAdapterOptions } from "./built-in-adapter-options.js";
import type { CliAdapter, CliInvocation, CliLaunch, CliLineParser, LineVerdict } from "./cli-adapter.js";
import type { CliTranscript } from "./cli-transcript.js";
import { codexRetryOverrides } from "./codex-provider.js";
import { parseJsonLine } from "./json-line.js";
import { CODEX_RULES } from "./cli-tool-rules.js";

const ItemSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  text: z.string().optional(),
  message: z.string().optional(),
  command: z.string().optional(),
  aggregated_output: z.string().optional(),
  exit_code: z.number().nullish(),
  status: z.string().optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
  arguments: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ message: z.string().optional() }).nullish(),
  changes: z.array(z.looseObject({ path: z.string(), kind: z.string().optional() })).optional(),
  query: z.string().optional(),
});
type CodexItem = z.infer<typeof ItemSchema>;

const ItemLineSchema = z.looseObject({ item: ItemSchema });

/** Codex CLI's `exec --json` lines that agentd reads. */
const CODEX_LINE_SCHEMAS = {
  "item.started": ItemLineSchema,
  "item.completed": ItemLineSchema,
  "turn.completed": z.looseObject({
    usage: z
      .looseObject({
        input_tokens: z.number().default(0),
        cached_input_tokens: z.number().optional(),
        output_tokens: z.number().default(0),
      })
      .optional(),
  }),
  "turn.failed": z.looseObject({ error: z.looseObject({ message: z.string() }).optional() }),
  error: z.looseObject({ message: z.string() }),
};

/** Codex's notice while it retries a dropped or failed stream: noise for the watchdog. */
const RETRY_NOTICE_PATTERN = /^Reconnecting\b|waiting for network|retrying|stream disconnected/i;

/**
 * Codex CLI: `codex exec --json --skip-git-repo-check -C <workdir> -m m --sandbox workspace-write
 * -c developer_instructions=<prompt> [cli_tools.codex.args] [cli.args] -- <task>`. Inside agentd's
 * own sandbox Codex's sandbox stands down (`--dangerously-bypass-approvals-and-sandbox`): a nested
 * one fails. Codex waits for stdin when it is open; the worker always closes it. The retries of a
 * provider the user defined are capped; the built-in provider's cannot be, and its retry notices
 * are noise to the idle watchdog.
 */
export function codexAdapter(options: BuiltInAdapterOptions = {}): CliAdapter {
  return {
    tool: "codex",
    command: options.command ?? "codex",
    defaultModel: CODEX_RULES.defaultModel,
    environment: options.environment ?? {},
    configArguments: options.configArguments ?? [],
    hasFinalLine: true,
    ruleSupport: CODEX_RULES.ruleSupport,
    prepare: prepareCodex,
    createLineParser: createCodexLineParser,
  };
}

function prepareCodex(invocation: CliInvocation): CliLaunch {
  const model = invocation.model === undefined ? [] : ["-m", invocation.model];
  const systemPrompt = invocation.systemPrompt.trim();
  const sandbox = invocation.outerSandbox
    ? ["--dangerously-bypass-approvals-and-sandbox"]
    : ["--sandbox", "workspace-write"];
  return {
    arguments: [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-C",
      invocation.workdir,
      ...model,
      ...sandbox,
      // A TOML basic string: JSON's escapes are TOML's.
      ...(systemPrompt === "" ? [] : ["-c", `developer_instructions=${JSON.stringify(systemPrompt)}`]),
      ...codexRetryOverrides({ ...process.env, ...invocation.configuredEnvironment }),
      ...invocation.configArguments,
      ...invocation.extraArguments,
      "--",
      invocation.task,
    ],
    environment: {},
    files: {},
  };
}

/** A parser of one Codex run: the answer is the last `agent_message` of the turn. */
export function createCodexLineParser(): CliLineParser {
  let lastAgentMessage = "";
  return (line: string, transcript: CliTranscript): LineVerdict => {
    const parsed = parseJsonLine(line, CODEX_LINE_SCHEMAS, transcript);
    if (!parsed) return "noise";
    switch (parsed.type) {
      case "item.started":
        startItem(parsed.value.item, transcript);
        return "progress";
      case "item.completed":
        if (parsed.value.item.type === "agent_message") lastAgentMessage = parsed.value.item.text ?? "";
        if (
          parsed.value.item.type === "error" &&
          RETRY_NOTICE_PATTERN.test(parsed.value.item.message ?? "")
        ) {
          transcript.retryNotice(parsed.value.item.message ?? "");
          return "noise";
        }
        completeItem(parsed.value.item, transcript);
        return "progress";
      case "turn.completed": {
        const usage = parsed.value.usage;
        transcript.finish({
          text: lastAgentMessage,
          isError: false,
          ...(usage
            ? {
                usage: {
                  prompt_tokens: usage.input_tokens,
                  completion_tokens: usage.output_tokens,
                  total_tokens: usage.input_tokens + usage.output_tokens,
                },
              }
            : {}),
        });
        return "progress";
      }
      case "turn.failed":
        transcript.finish({ text: parsed.value.error?.message ?? "the Codex turn failed", isError: true });
        return "progress";
      case "error":
        if (RETRY_NOTICE_PATTERN.test(parsed.value.message)) {
          transcript.retryNotice(parsed.value.message);
          return "noise";
        }
        transcript.error(parsed.value.message);
        return "progress";
      default:
        return "noise";
    }
  };
}

function toolCall(item: CodexItem): { tool: string; input: unknown } | undefined {
  switch (item.type) {
    case "command_execution":
      return { tool: "shell", input: { command: item.command ?? "" } };
    case "mcp_tool_call":
      return {
        tool: `mcp:${item.server ?? "unknown"}/${item.tool ?? "unknown"}`,
        input: item.arguments ?? {},
      };
    case "file_change":
      return { tool: "file_change", input: { changes: item.changes ?? [] } };
    case "web_search":
      return { tool: "web_search", input: { query: item.query ?? "" } };
    default:
      return undefined;
  }
}

function startItem(item: CodexItem, transcript: CliTranscript): void {
  const call = toolCall(item);
  if (call) transcript.action(item.id, call.tool, call.input);
}

function completeItem(item: CodexItem, transcript: CliTranscript): void {
  if (item.type === "agent_message" || item.type === "reasoning") {
    if (item.text) transcript.thought(item.text);
    return;
  }
  if (item.type === "error") {
    transcript.toolWarning(item.message ?? "Codex reported an error item");
    return;
  }
  const call = toolCall(item);
  if (!call) return;
  if (transcript.call(item.id) === undefined) startItem(item, transcript);
  if (item.status === "declined") transcript.denied(call.tool, JSON.stringify(call.input));
  const ok =
    item.status !== "failed" &&
    (item.exit_code === undefined || item.exit_code === null || item.exit_code === 0);
  transcript.observation(item.id, ok, itemOutput(item));
}

function itemOutput(item: CodexItem): string {
  if (item.type === "command_execution") return item.aggregated_output ?? "";
  if (item.type === "file_change")
    return (item.changes ?? []).map((change) => `${change.kind ?? "update"} ${change.path}`).join("\n");
  if (item.error?.message) return item.error.message;
  return item.result === undefined ? "" : JSON.stringify(item.result);
}
