import path from "node:path";
import { z } from "zod";
import type { BuiltInAdapterOptions } from "./built-in-adapter-options.js";
import type { CliAdapter, CliInvocation, CliLaunch, LineVerdict } from "./cli-adapter.js";
import { geminiPolicy } from "./gemini-rules.js";
import type { CliTranscript } from "./cli-transcript.js";
import { parseJsonLine } from "./json-line.js";
import { GEMINI_RULES } from "./cli-tool-rules.js";

const GeminiErrorSchema = z.looseObject({
  type: z.string().optional(),
  message: z.string().optional(),
  code: z.union([z.number(), z.string()]).optional(),
});

/** Gemini CLI's stream-json lines (`init` carries nothing agentd needs). */
const GEMINI_LINE_SCHEMAS = {
  message: z.looseObject({ role: z.string(), content: z.string(), delta: z.boolean().optional() }),
  tool_use: z.looseObject({ tool_name: z.string(), tool_id: z.string(), parameters: z.unknown() }),
  tool_result: z.looseObject({
    tool_id: z.string(),
    status: z.string(),
    output: z.string().optional(),
    error: GeminiErrorSchema.optional(),
  }),
  error: z.looseObject({ severity: z.string().optional(), message: z.string() }),
  result: z.looseObject({
    status: z.string(),
    error: GeminiErrorSchema.optional(),
    stats: z
      .looseObject({
        total_tokens: z.number().optional(),
        input_tokens: z.number().optional(),
        output_tokens: z.number().optional(),
      })
      .optional(),
  }),
};

/**
 * Gemini CLI's documented exit codes. In JSON output modes an API error exits with its HTTP status
 * modulo 256: 429 → 173, 401 → 145, 403 → 147, 500 → 244.
 */
const GEMINI_EXIT_CODES: Record<number, { kind: "auth" | "rate_limit" | "crash"; message: string }> = {
  41: { kind: "auth", message: "Gemini CLI could not authenticate (exit 41)" },
  42: { kind: "crash", message: "Gemini CLI rejected its input (exit 42)" },
  52: { kind: "crash", message: "Gemini CLI found its configuration invalid (exit 52)" },
  53: { kind: "crash", message: "Gemini CLI reached its turn limit (exit 53)" },
  55: {
    kind: "crash",
    message: "Gemini CLI does not trust the working directory (exit 55): add it to its trusted folders",
  },
  145: { kind: "auth", message: "the Gemini API answered 401 Unauthorized" },
  147: { kind: "auth", message: "the Gemini API answered 403 Forbidden" },
  173: { kind: "rate_limit", message: "the Gemini API answered 429 Too Many Requests" },
  244: { kind: "crash", message: "the Gemini API answered 500 Internal Server Error" },
};

/** A tool result whose error says the policy or the user refused the call. */
const DENIAL_PATTERN = /denied|not allowed|policy|permission/i;
/** Gemini's notices while it backs off and retries a failed API call. */
const RETRY_NOTICE_PATTERN = /retrying|attempt \d+ failed|backoff/i;
/** Attempts per API call instead of Gemini's 10 (minutes of back-off on a quota error). */
const MAX_ATTEMPTS = 2;

/**
 * Gemini CLI: `gemini --prompt=<task> -o stream-json -m m --approval-mode auto_edit --skip-trust
 * [--policy <rules>] [cli_tools.gemini.args] [cli.args]`. The system prompt goes in a file named
 * by `GEMINI_SYSTEM_MD` (it replaces Gemini's own); a system settings file
 * (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, unless the user set one) caps its API attempts and its turns.
 */
export function geminiAdapter(options: BuiltInAdapterOptions = {}): CliAdapter {
  return {
    tool: "gemini",
    command: options.command ?? "gemini",
    defaultModel: GEMINI_RULES.defaultModel,
    environment: options.environment ?? {},
    configArguments: options.configArguments ?? [],
    hasFinalLine: true,
    ruleSupport: GEMINI_RULES.ruleSupport,
    prepare: prepareGemini,
    createLineParser: () => parseGeminiLine,
    exitCodeHint: (exitCode) => GEMINI_EXIT_CODES[exitCode],
  };
}

function prepareGemini(invocation: CliInvocation): CliLaunch {
  const { runDirectory, rules } = invocation;
  const files: Record<string, string> = {};
  const environment: Record<string, string> = { GEMINI_CLI_TRUST_WORKSPACE: "true" };
  const systemPrompt = invocation.systemPrompt.trim();
  if (systemPrompt !== "") {
    const file = path.join(runDirectory, "gemini-system.md");
    files[file] = `${systemPrompt}\n`;
    environment.GEMINI_SYSTEM_MD = file;
  }
  if (invocation.configuredEnvironment.GEMINI_CLI_SYSTEM_SETTINGS_PATH === undefined) {
    const file = path.join(runDirectory, "gemini-settings.json");
    const settings = {
      general: { maxAttempts: MAX_ATTEMPTS },
      model: { maxSessionTurns: rules.maxIterations },
    };
    files[file] = `${JSON.stringify(settings, null, 2)}\n`;
    environment.GEMINI_CLI_SYSTEM_SETTINGS_PATH = file;
  }
  const policy = geminiPolicy(rules);
  const policyArguments: string[] = [];
  if (policy !== undefined) {
    const file = path.join(runDirectory, "gemini-policy.toml");
    files[file] = policy;
    policyArguments.push("--policy", file);
  }
  const model = invocation.model === undefined ? [] : ["-m", invocation.model];
  return {
    arguments: [
      // One word with the option: a task that starts with `-` is the prompt, never an option.
      `--prompt=${invocation.task}`,
      "-o",
      "stream-json",
      ...model,
      // Edits in the workdir go through headless; inside agentd's sandbox every call does.
      "--approval-mode",
      invocation.outerSandbox ? "yolo" : "auto_edit",
      "--skip-trust",
      ...policyArguments,
      ...invocation.configArguments,
      ...invocation.extraArguments,
    ],
    environment,
    files,
  };
}

/** Maps one Gemini CLI stream-json line to transcript entries. */
export function parseGeminiLine(line: string, transcript: CliTranscript): LineVerdict {
  const parsed = parseJsonLine(line, GEMINI_LINE_SCHEMAS, transcript);
  if (!parsed) return "noise";
  switch (parsed.type) {
    case "message":
      if (parsed.value.role !== "assistant") return "noise";
      if (parsed.value.delta) transcript.thoughtChunk(parsed.value.content);
      else transcript.thought(parsed.value.content);
      return "progress";
    case "tool_use":
      transcript.action(parsed.value.tool_id, parsed.value.tool_name, parsed.value.parameters);
      return "progress";
    case "tool_result": {
      const { tool_id: callId, status, output, error } = parsed.value;
      const call = transcript.call(callId);
      if (status !== "success" && error?.message && DENIAL_PATTERN.test(error.message)) {
        transcript.denied(
          call?.tool ?? "unknown",
          `${JSON.stringify(call?.arguments ?? {})}: ${error.message}`,
        );
      }
      transcript.observation(callId, status === "success", output ?? error?.message ?? "");
      return "progress";
    }
    case "error":
      if (RETRY_NOTICE_PATTERN.test(parsed.value.message)) {
        transcript.retryNotice(parsed.value.message);
        return "noise";
      }
      if (parsed.value.severity === "warning") transcript.toolWarning(parsed.value.message);
      else transcript.error(parsed.value.message);
      return "progress";
    case "result": {
      const { status, error, stats } = parsed.value;
      const isError = status !== "success";
      const httpStatus = typeof error?.code === "number" ? error.code : undefined;
      if (isError && httpStatus !== undefined) transcript.httpStatus = httpStatus;
      const usage = stats && {
        prompt_tokens: stats.input_tokens ?? 0,
        completion_tokens: stats.output_tokens ?? 0,
        total_tokens: stats.total_tokens ?? (stats.input_tokens ?? 0) + (stats.output_tokens ?? 0),
      };
      const errorText = [error?.type, error?.message].filter(Boolean).join(": ");
      const text = isError ? errorText || `Gemini CLI ended with status ${status}` : transcript.answer;
      transcript.finish({ text, isError, ...(usage ? { usage } : {}) });
      return "progress";
    }
    default:
      return "noise";
  }
}
