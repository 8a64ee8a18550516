import { z } from "zod";
import { EMPTY_USAGE, type Usage, addUsage } from "../../run-vocabulary/run-status.js";
import type { BuiltInAdapterOptions } from "./built-in-adapter-options.js";
import type { CliAdapter, CliInvocation, CliLaunch, LineVerdict } from "./cli-adapter.js";
import type { CliLimit, CliTranscript } from "./cli-transcript.js";
import { claudeRuleArguments } from "./claude-rules.js";
import { parseJsonLine } from "./json-line.js";
import { CLAUDE_RULES } from "./cli-tool-rules.js";

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

const ClaudeUsageSchema = z.looseObject({
  input_tokens: z.number().default(0),
  output_tokens: z.number().default(0),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

const MessageLineSchema = z.looseObject({
  message: z.looseObject({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.union([z.string(), z.array(ContentPartSchema)]),
    usage: ClaudeUsageSchema.nullish(),
  }),
});

const PermissionDenialSchema = z.looseObject({ tool_name: z.string(), tool_input: z.unknown().optional() });

/** Claude Code's stream-json lines that agentd reads. */
const CLAUDE_LINE_SCHEMAS = {
  assistant: MessageLineSchema,
  user: MessageLineSchema,
  // `init` carries nothing agentd needs; `api_retry` is the tool waiting to retry an API error.
  system: z.looseObject({
    subtype: z.string().optional(),
    attempt: z.number().optional(),
    max_retries: z.number().optional(),
    error_status: z.number().nullish(),
    error: z.string().nullish(),
  }),
  // Token deltas with --include-partial-messages: progress for the watchdog, no events.
  stream_event: z.looseObject({}),
  result: z.looseObject({
    subtype: z.string().optional(),
    is_error: z.boolean().default(false),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    total_cost_usd: z.number().nullish(),
    usage: ClaudeUsageSchema.nullish(),
    api_error_status: z.number().nullish(),
    permission_denials: z.array(PermissionDenialSchema).optional(),
    // Per model; the one place the tokens are when Claude stopped at --max-budget-usd (usage is 0).
    modelUsage: z
      .record(
        z.string(),
        z.looseObject({
          inputTokens: z.number().default(0),
          outputTokens: z.number().default(0),
          cacheReadInputTokens: z.number().default(0),
          cacheCreationInputTokens: z.number().default(0),
        }),
      )
      .optional(),
  }),
};

const SYNTHETIC_MODEL = "<synthetic>";

/** Claude's own stops at the limits agentd passed it. */
const LIMIT_SUBTYPES: Record<string, CliLimit> = {
  error_max_turns: "max_iterations",
  error_max_budget_usd: "budget_exceeded",
};

/**
 * Claude Code: `claude -p --output-format stream-json --verbose --include-partial-messages
 * --model m --append-system-prompt <prompt> --permission-mode acceptEdits` with the agent's rules
 * as its tool, turn and budget flags, then `cli_tools.claude.args`, then `cli.args`, then
 * `-- <task>`.
 * `CLAUDE_CODE_MAX_RETRIES=2` cuts its default of 10 API retries, so a quota or overload error
 * comes back in seconds instead of minutes.
 */
export function claudeAdapter(options: BuiltInAdapterOptions = {}): CliAdapter {
  return {
    tool: "claude",
    command: options.command ?? "claude",
    defaultModel: CLAUDE_RULES.defaultModel,
    environment: options.environment ?? {},
    configArguments: options.configArguments ?? [],
    hasFinalLine: true,
    ruleSupport: CLAUDE_RULES.ruleSupport,
    prepare: prepareClaude,
    createLineParser: () => parseClaudeLine,
  };
}

function prepareClaude(invocation: CliInvocation): CliLaunch {
  const model = invocation.model === undefined ? [] : ["--model", invocation.model];
  const systemPrompt = invocation.systemPrompt.trim();
  return {
    arguments: [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      ...model,
      ...(systemPrompt === "" ? [] : ["--append-system-prompt", systemPrompt]),
      // Edits in the workdir go through headless; other calls follow the agent's allow rules.
      "--permission-mode",
      "acceptEdits",
      ...claudeRuleArguments(invocation.rules),
      ...invocation.configArguments,
      ...invocation.extraArguments,
      // The task last, after `--`: a task that starts with `-` (a webhook's title, an upstream
      // result, a parent agent's words) is the prompt, never an option such as `--mcp-config=…`.
      "--",
      invocation.task,
    ],
    environment: {
      CLAUDE_CODE_MAX_RETRIES: "2",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    files: {},
  };
}

/** Maps one Claude Code stream-json line to transcript entries. */
export function parseClaudeLine(line: string, transcript: CliTranscript): LineVerdict {
  const parsed = parseJsonLine(line, CLAUDE_LINE_SCHEMAS, transcript);
  if (!parsed) return "noise";
  if (parsed.type === "stream_event") return "progress";
  if (parsed.type === "system") {
    const notice = parsed.value;
    if (notice.subtype !== "api_retry") return "noise";
    const status = notice.error_status ? ` (HTTP ${notice.error_status})` : "";
    const attempt =
      notice.attempt === undefined ? "" : ` attempt ${notice.attempt}/${notice.max_retries ?? "?"}`;
    transcript.retryNotice(`claude retries the API${attempt}${status}: ${notice.error ?? "error"}`);
    return "noise";
  }
  if (parsed.type === "assistant" || parsed.type === "user") {
    const { content, id, usage, model } = parsed.value.message;
    // Claude Code repeats an API error as a "<synthetic>" assistant message: the result line has it.
    if (model === SYNTHETIC_MODEL) return "noise";
    if (parsed.type === "assistant" && id !== undefined && usage)
      transcript.streamedUsage(id, claudeUsage(usage));
    if (typeof content === "string") return "progress";
    for (const part of content) readPart(part, transcript);
    return "progress";
  }
  const result = parsed.value;
  for (const denial of result.permission_denials ?? []) {
    transcript.denied(denial.tool_name, JSON.stringify(denial.tool_input ?? {}));
  }
  const limit = result.subtype === undefined ? undefined : LIMIT_SUBTYPES[result.subtype];
  if (limit) transcript.limitReached = limit;
  const isError = result.is_error || (result.subtype?.startsWith("error") ?? false);
  const text = result.result ?? result.errors?.join("\n") ?? result.subtype ?? "";
  if (isError && result.api_error_status) transcript.httpStatus = result.api_error_status;
  transcript.finish({
    text,
    isError,
    ...(result.usage || result.modelUsage ? { usage: resultUsage(result.usage, result.modelUsage) } : {}),
    ...(typeof result.total_cost_usd === "number" ? { costUsd: result.total_cost_usd } : {}),
  });
  return "progress";
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

/** The result's usage, else (when it says 0) the sum of its per-model usage. */
function resultUsage(
  usage: z.infer<typeof ClaudeUsageSchema> | null | undefined,
  modelUsage: z.infer<(typeof CLAUDE_LINE_SCHEMAS)["result"]>["modelUsage"],
): Usage {
  const total = usage ? claudeUsage(usage) : EMPTY_USAGE;
  if (total.total_tokens > 0 || !modelUsage) return total;
  return Object.values(modelUsage).reduce<Usage>((sum, model) => {
    const prompt = model.inputTokens + model.cacheReadInputTokens + model.cacheCreationInputTokens;
    return addUsage(sum, {
      prompt_tokens: prompt,
      completion_tokens: model.outputTokens,
      total_tokens: prompt + model.outputTokens,
    });
  }, EMPTY_USAGE);
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
