import { z } from "zod";

const ToolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const UsageSchema = z.looseObject({
  prompt_tokens: z.number().nonnegative(),
  completion_tokens: z.number().nonnegative(),
  total_tokens: z.number().nonnegative().optional(),
});

/**
 * One streamed chat completion chunk as agentd relies on it. Unknown fields pass through untouched;
 * what the loop reads is checked, so a malformed chunk becomes LLM_BAD_RESPONSE, not a crash.
 */
export const ChatChunkSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        delta: z
          .looseObject({
            content: z.string().nullish(),
            tool_calls: z.array(ToolCallDeltaSchema).nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: UsageSchema.nullish(),
});
export type ChatChunk = z.infer<typeof ChatChunkSchema>;
