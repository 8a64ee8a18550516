import type { z } from "zod";
import type { CliTranscript } from "./cli-transcript.js";

/**
 * Parses one stdout line of a JSONL stream with `schemas[line.type]`. A line that is not JSON is
 * reported as ignored; a JSON object of an unknown type is skipped quietly (newer tool versions add
 * types); a known type whose shape does not match is reported. Returns the typed line or undefined.
 */
export function parseJsonLine<Schemas extends Record<string, z.ZodType>>(
  line: string,
  schemas: Schemas,
  transcript: CliTranscript,
): { [Type in keyof Schemas]: { type: Type; value: z.infer<Schemas[Type]> } }[keyof Schemas] | undefined {
  const trimmed = line.trim();
  if (trimmed === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    transcript.ignoredLine(trimmed, "not JSON");
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || !("type" in parsed)) {
    transcript.ignoredLine(trimmed, "no type field");
    return undefined;
  }
  const type = String(parsed.type);
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (!schema) return undefined;
  const result = schema.safeParse(parsed);
  if (!result.success) {
    transcript.ignoredLine(trimmed, `unexpected shape of a "${type}" line`);
    return undefined;
  }
  return { type, value: result.data } as never;
}
