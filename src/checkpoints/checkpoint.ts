import { z } from "zod";
import type { ChatMessage } from "../llm/chat-message.js";
import type { Usage } from "../run-vocabulary/run-status.js";

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const ChatMessageSchema: z.ZodType<ChatMessage> = z.union([
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallSchema).optional(),
  }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string(), content: z.string() }),
]);

/**
 * The LLM worker's state at the end of a round (and while its tool calls run), written beside the
 * run as `<data_dir>/checkpoints/<run>.json`: enough to continue the run where it stopped.
 */
export const CheckpointSchema = z.object({
  run: z.string(),
  /** Model calls completed: the round a resumed run continues after. */
  round: z.number().int().nonnegative(),
  /** The conversation as the model saw it (tool outputs already masked and capped). */
  messages: z.array(ChatMessageSchema),
  usage: z.object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.number(),
  }),
  cost_usd: z.number(),
  /** Tools removed for the rest of the run after repeated failures. */
  removed_tools: z.array(z.string()),
  /** The loop detector's recent call signatures. */
  recent_calls: z.array(z.string()),
  saved_at: z.string(),
});
export type Checkpoint = z.infer<typeof CheckpointSchema> & { usage: Usage };

/** Where a run's checkpoints go, and the one it continues from when resumed. */
export interface RunCheckpoints {
  /**
   * Keeps the state to resume from, and resolves once it is durable: on disk (files) or committed
   * (PostgreSQL). The worker waits for it before running the round's tools. `messages` is an array
   * of the caller's own that it no longer changes (a save may keep it to compare the next one with).
   */
  save(checkpoint: Omit<Checkpoint, "run" | "saved_at">): Promise<void>;
  /** Set when the run is resumed: the state to continue from. */
  readonly resumeFrom?: Checkpoint | undefined;
}
