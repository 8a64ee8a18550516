import { z } from "zod";

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

const ENVELOPE_KEYS = new Set(["id", "agent", "run", "type", "time", "data"]);

/**
 * Parses one log line; undefined when it is not a valid event (a torn or damaged line). Start-up
 * reads thousands (every agent's ring): a line of our own shape is checked by hand, the same
 * checks as StoredEventSchema; any other value goes through the schema, which decides.
 */
export function parseStoredEvent(line: string): StoredEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (isStoredEvent(value)) return value;
  const parsed = StoredEventSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** StoredEventSchema's checks, on a value with no key besides the envelope's (nothing to strip). */
function isStoredEvent(value: unknown): value is StoredEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const event = value as Record<string, unknown>;
  for (const key in event) if (!ENVELOPE_KEYS.has(key)) return false;
  return (
    typeof event.id === "number" &&
    Number.isSafeInteger(event.id) &&
    event.id > 0 &&
    typeof event.agent === "string" &&
    event.agent.length > 0 &&
    (event.run === null || typeof event.run === "string") &&
    typeof event.type === "string" &&
    event.type.length > 0 &&
    typeof event.time === "string" &&
    "data" in event
  );
}
