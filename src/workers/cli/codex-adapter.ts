import { z } from "zod";
import type { CliAdapter, CliInvocation, CliLineParser } from "./cli-adapter.js";
import type { CliTranscript } from "./cli-transcript.js";
import { parseJsonLine } from "./json-line.js";

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

/**
 * Codex CLI: `codex exec --json --skip-git-repo-check -C <workdir> [-m m] [cli.args] -- <task>`.
 * Codex waits for stdin when it is open; the worker always closes it. Codex has no documented
 * switch for its built-in provider's retries, so the idle watchdog bounds them.
 */
export function codexAdapter(command = "codex", environment: Record<string, string> = {}): CliAdapter {
  return {
    tool: "codex",
    command,
    environment,
    hasFinalLine: true,
    buildArguments: buildCodexArguments,
    createLineParser: createCodexLineParser,
  };
}

function buildCodexArguments(invocation: CliInvocation): string[] {
  const model = invocation.model === undefined ? [] : ["-m", invocation.model];
  return [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "-C",
    invocation.workdir,
    ...model,
    ...invocation.extraArguments,
    "--",
    invocation.task,
  ];
}

/** A parser of one Codex run: the answer is the last `agent_message` of the turn. */
export function createCodexLineParser(): CliLineParser {
  let lastAgentMessage = "";
  return (line: string, transcript: CliTranscript) => {
    const parsed = parseJsonLine(line, CODEX_LINE_SCHEMAS, transcript);
    if (!parsed) return;
    switch (parsed.type) {
      case "item.started":
        startItem(parsed.value.item, transcript);
        return;
      case "item.completed":
        if (parsed.value.item.type === "agent_message") lastAgentMessage = parsed.value.item.text ?? "";
        completeItem(parsed.value.item, transcript);
        return;
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
        return;
      }
      case "turn.failed":
        transcript.finish({ text: parsed.value.error?.message ?? "the Codex turn failed", isError: true });
        return;
      case "error":
        transcript.error(parsed.value.message);
        return;
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
  if (!transcript.toolCalls.some((known) => known.callId === item.id)) startItem(item, transcript);
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
