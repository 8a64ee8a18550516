import { z } from "zod";
import { parseJsonAs } from "../schema/parse-json-as.js";

/**
 * One line of an event log read back from disk. The envelope is checked; `data` is kept as written
 * (it was produced by agentd from a typed event, and is served as is).
 */
export const StoredEventSchema = z.object({
  id: z.number().int().positive(),
  agent: z.string().min(1),
  run: z.string().nullable(),
  type: z.string().min(1),
  time: z.string(),
  data: z.unknown(),
});
export type StoredEvent = z.infer<typeof StoredEventSchema>;

/** Parses one log line; undefined when it is not a valid event (a torn or damaged line). */
export function parseStoredEvent(line: string): StoredEvent | undefined {
  return parseJsonAs(StoredEventSchema, line);
}
