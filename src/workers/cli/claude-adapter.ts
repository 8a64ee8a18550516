import { z } from "zod";
import type { Usage } from "../../runs/run-status.js";
import type { CliAdapter, CliInvocation } from "./cli-adapter.js";
import type { CliTranscript } from "./cli-transcript.js";
import { parseJsonLine } from "./json-line.js";

const TextPartSchema = z.looseObject({ text: z.string() });
const ThinkingPartSchema = z.looseObject({ thinking: z.string() });
const ToolUsePartSchema = z.looseObject({ id: z.string(), name: z.string(), input: z.unknown() });
const ToolResultPartSchema = z.looseObject({
  tool_use_id: z.string(),
  content: z
    .union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))])
    .optional(),
  is_error: z.boolean().optional(),
});
const ContentPartSchema = z.looseObject({ type: z.string() });
type ContentPart = z.infer<typeof ContentPartSchema>;

const MessageLineSchema = z.looseObject({
  message: z.looseObject({ content: z.union([z.string(), z.array(ContentPartSchema)]) }),
});

const ClaudeUsageSchema = z.looseObject({
  input_tokens: z.number().default(0),
  output_tokens: z.number().default(0),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

/** Claude Code's stream-json lines that agentd reads (`system` init lines carry nothing it needs). */
const CLAUDE_LINE_SCHEMAS = {
  assistant: MessageLineSchema,
  user: MessageLineSchema,
  result: z.looseObject({
    subtype: z.string().optional(),
    is_error: z.boolean().default(false),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    total_cost_usd: z.number().nullish(),
    usage: ClaudeUsageSchema.nullish(),
    api_error_status: z.number().nullish(),
  }),
};

/**
 * Claude Code: `claude -p <task> --output-format stream-json --verbose [--model m] [cli.args]`.
 * `CLAUDE_CODE_MAX_RETRIES=2` cuts its default of 10 API retries, so a quota or overload error
 * comes back in seconds instead of minutes; the idle watchdog ends whatever still hangs.
 */
export function claudeAdapter(command = "claude", environment: Record<string, string> = {}): CliAdapter {
  return {
    tool: "claude",
    command,
    environment: { CLAUDE_CODE_MAX_RETRIES: "2", ...environment },
    hasFinalLine: true,
    buildArguments: buildClaudeArguments,
    createLineParser: () => parseClaudeLine,
  };
}

function buildClaudeArguments(invocation: CliInvocation): string[] {
  const model = invocation.model === undefined ? [] : ["--model", invocation.model];
  return [
    "-p",
    invocation.task,
    "--output-format",
    "stream-json",
    "--verbose",
    ...model,
    ...invocation.extraArguments,
  ];
}

/** Maps one Claude Code stream-json line to transcript entries. */
export function parseClaudeLine(line: string, transcript: CliTranscript): void {
  const parsed = parseJsonLine(line, CLAUDE_LINE_SCHEMAS, transcript);
  if (!parsed) return;
  if (parsed.type === "assistant" || parsed.type === "user") {
    const { content } = parsed.value.message;
    if (typeof content === "string") return;
    for (const part of content) readPart(part, transcript);
    return;
  }
  const result = parsed.value;
  const isError = result.is_error || (result.subtype?.startsWith("error") ?? false);
  const text = result.result ?? result.errors?.join("\n") ?? result.subtype ?? "";
  if (isError && result.api_error_status) transcript.httpStatus = result.api_error_status;
  transcript.finish({
    text,
    isError,
    ...(result.usage ? { usage: claudeUsage(result.usage) } : {}),
    ...(typeof result.total_cost_usd === "number" ? { costUsd: result.total_cost_usd } : {}),
  });
}

function readPart(part: ContentPart, transcript: CliTranscript): void {
  if (part.type === "text") {
    const text = TextPartSchema.safeParse(part);
    if (text.success) transcript.thought(text.data.text);
  } else if (part.type === "thinking") {
    const thinking = ThinkingPartSchema.safeParse(part);
    if (thinking.success) transcript.thought(thinking.data.thinking);
  } else if (part.type === "tool_use") {
    const call = ToolUsePartSchema.safeParse(part);
    if (call.success) transcript.action(call.data.id, call.data.name, call.data.input);
  } else if (part.type === "tool_result") {
    const result = ToolResultPartSchema.safeParse(part);
    if (result.success) {
      const { tool_use_id: callId, is_error: isError, content } = result.data;
      transcript.observation(callId, isError !== true, toolResultText(content));
    }
  }
}

function toolResultText(content: string | Array<{ type: string; text?: string | undefined }> | undefined) {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((piece) => piece.text ?? `[${piece.type}]`).join("\n");
}

function claudeUsage(usage: z.infer<typeof ClaudeUsageSchema>): Usage {
  const prompt =
    usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output_tokens,
    total_tokens: prompt + usage.output_tokens,
  };
}
