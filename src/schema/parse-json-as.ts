import type { z } from "zod";

/** `text` parsed as JSON and checked by `schema`; undefined for text that is not JSON or not valid (a torn line, a damaged row). */
export function parseJsonAs<Schema extends z.ZodType>(
  schema: Schema,
  text: unknown,
): z.output<Schema> | undefined {
  if (typeof text !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
