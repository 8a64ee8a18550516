import { z } from "zod";

/**
 * A line after the first of a checkpoint file: the state of a later save. `keep` messages of the
 * state before stay, `messages` follow them; the other fields replace the state's, and
 * `removed_tools` and `recent_calls` are left out when they did not change.
 */
const CheckpointDeltaSchema = z.object({
  keep: z.number().int().nonnegative(),
  round: z.number().int().nonnegative(),
  usage: z.unknown(),
  cost_usd: z.number(),
  removed_tools: z.array(z.string()).optional(),
  recent_calls: z.array(z.string()).optional(),
  saved_at: z.string(),
  // Checked with the whole checkpoint once the lines are put together (CheckpointSchema).
  messages: z.array(z.unknown()),
});

/**
 * The state a checkpoint file holds, put together from its lines, to be checked with
 * CheckpointSchema: the first line is a whole checkpoint (a file written before the journal is
 * that line alone), each later one a save appended to it (CheckpointDeltaSchema). A line that
 * cannot be read (the end of an append a power cut tore) ends the file: the state before it is the
 * checkpoint. Undefined when not even the first line can be read.
 */
export function readCheckpointJournal(text: string): unknown {
  let start = 0;
  let state: Record<string, unknown> | undefined;
  let messages: unknown[] = [];
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end === -1 ? text.length : end);
    start = end === -1 ? text.length : end + 1;
    if (line === "") continue;
    const value = parseJson(line);
    if (state === undefined) {
      if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
      state = value as Record<string, unknown>;
      messages = Array.isArray(state.messages) ? [...(state.messages as unknown[])] : [];
      continue;
    }
    const delta = CheckpointDeltaSchema.safeParse(value);
    if (!delta.success || delta.data.keep > messages.length) break;
    const { keep, messages: added, ...rest } = delta.data;
    messages.length = keep;
    for (const message of added) messages.push(message);
    state = { ...state, ...rest };
  }
  return state === undefined ? undefined : { ...state, messages };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
