import type { ChatChunk } from "./chat-chunk-schema.js";

/**
 * The chunk itself when it has the shape ChatChunkSchema accepts and gives back unchanged: what a
 * well-behaved server sends every time. Otherwise undefined, and the schema decides (a default to
 * fill in, or the issue that makes it LLM_BAD_RESPONSE). Every model call streams several chunks,
 * and the schema's parse (a copy of each chunk, field by field) was a tenth of what the loop itself
 * spends per round; this check reads the same fields and copies nothing. It accepts nothing the
 * schema refuses: test/llm/plain-chat-chunk.test.ts holds the two side by side.
 */
export function plainChatChunk(raw: unknown): ChatChunk | undefined {
  if (!isRecord(raw)) return undefined;
  const { choices, usage } = raw;
  if (!Array.isArray(choices)) return undefined;
  for (const choice of choices as unknown[]) if (!isPlainChoice(choice)) return undefined;
  if (usage !== undefined && usage !== null && !isPlainUsage(usage)) return undefined;
  return raw as ChatChunk;
}

function isPlainChoice(choice: unknown): boolean {
  if (!isRecord(choice) || !isNullishString(choice["finish_reason"])) return false;
  const delta = choice["delta"];
  if (delta === undefined || delta === null) return true;
  if (!isRecord(delta) || !isNullishString(delta["content"])) return false;
  const toolCalls = delta["tool_calls"];
  if (toolCalls === undefined || toolCalls === null) return true;
  if (!Array.isArray(toolCalls)) return false;
  for (const call of toolCalls as unknown[]) if (!isPlainToolCallDelta(call)) return false;
  return true;
}

function isPlainToolCallDelta(call: unknown): boolean {
  if (!isRecord(call)) return false;
  const index = call["index"];
  if (typeof index !== "number" || !Number.isSafeInteger(index) || index < 0) return false;
  if (!isNullishString(call["id"])) return false;
  const calledFunction = call["function"];
  if (calledFunction === undefined || calledFunction === null) return true;
  return (
    isRecord(calledFunction) &&
    isNullishString(calledFunction["name"]) &&
    isNullishString(calledFunction["arguments"])
  );
}

function isPlainUsage(usage: unknown): boolean {
  if (!isRecord(usage)) return false;
  const total = usage["total_tokens"];
  return (
    isTokenCount(usage["prompt_tokens"]) &&
    isTokenCount(usage["completion_tokens"]) &&
    (total === undefined || isTokenCount(total))
  );
}

function isTokenCount(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function isNullishString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === "string";
}

/** A plain object (not an array), as a zod object schema takes it. */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
