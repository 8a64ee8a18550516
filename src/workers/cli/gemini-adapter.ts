import { z } from "zod";
import type { CliAdapter, CliInvocation } from "./cli-adapter.js";
import type { CliTranscript } from "./cli-transcript.js";
import { parseJsonLine } from "./json-line.js";

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

/**
 * Gemini CLI: `gemini -p <task> -o stream-json [-m m] [cli.args]`. It has no documented switch
 * for its internal retries, so the idle watchdog and the run's timeout bound them.
 */
export function geminiAdapter(command = "gemini", environment: Record<string, string> = {}): CliAdapter {
  return {
    tool: "gemini",
    command,
    environment,
    hasFinalLine: true,
    buildArguments: buildGeminiArguments,
    createLineParser: () => parseGeminiLine,
    exitCodeHint: (exitCode) => GEMINI_EXIT_CODES[exitCode],
  };
}

function buildGeminiArguments(invocation: CliInvocation): string[] {
  const model = invocation.model === undefined ? [] : ["-m", invocation.model];
  return ["-p", invocation.task, "-o", "stream-json", ...model, ...invocation.extraArguments];
}

/** Maps one Gemini CLI stream-json line to transcript entries. */
export function parseGeminiLine(line: string, transcript: CliTranscript): void {
  const parsed = parseJsonLine(line, GEMINI_LINE_SCHEMAS, transcript);
  if (!parsed) return;
  switch (parsed.type) {
    case "message":
      if (parsed.value.role !== "assistant") return;
      if (parsed.value.delta) transcript.thoughtChunk(parsed.value.content);
      else transcript.thought(parsed.value.content);
      return;
    case "tool_use":
      transcript.action(parsed.value.tool_id, parsed.value.tool_name, parsed.value.parameters);
      return;
    case "tool_result": {
      const { tool_id: callId, status, output, error } = parsed.value;
      transcript.observation(callId, status === "success", output ?? error?.message ?? "");
      return;
    }
    case "error":
      if (parsed.value.severity === "warning") transcript.toolWarning(parsed.value.message);
      else transcript.error(parsed.value.message);
      return;
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
      return;
    }
  }
}
