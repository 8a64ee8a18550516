import { closest, distance } from "fastest-levenshtein";
import type { z } from "zod";

interface SchemaInternals {
  _zod?: {
    def?: {
      type?: string;
      innerType?: unknown;
      in?: unknown;
      shape?: Record<string, unknown>;
      valueType?: unknown;
      options?: unknown[];
    };
  };
}

/** Unwraps optional/default/pipe/nullable wrappers down to the schema that holds keys. */
function unwrap(schema: unknown): SchemaInternals | undefined {
  let current = schema as SchemaInternals | undefined;
  for (let depth = 0; depth < 20 && current?._zod?.def; depth++) {
    const definition = current._zod.def;
    if (definition.innerType) current = definition.innerType as SchemaInternals;
    else if (definition.type === "pipe" && definition.in) current = definition.in as SchemaInternals;
    else if (definition.type === "union" && Array.isArray(definition.options)) {
      const objectOption = definition.options.map(unwrap).find((option) => option?._zod?.def?.shape);
      return objectOption ?? current;
    } else return current;
  }
  return current;
}

/** The keys an object schema accepts at `path` inside `root` (record keys are free, so none). */
export function knownKeysAt(root: z.ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  let current = unwrap(root);
  for (const segment of path) {
    const definition = current?._zod?.def;
    if (definition?.shape) current = unwrap(definition.shape[String(segment)]);
    else if (definition?.valueType) current = unwrap(definition.valueType);
    else return [];
  }
  return Object.keys(current?._zod?.def?.shape ?? {});
}

/** "did you mean `model`?" when a close known key exists. */
export function didYouMean(unknownKey: string, knownKeys: readonly string[]): string | undefined {
  if (knownKeys.length === 0) return undefined;
  const candidate = closest(unknownKey, [...knownKeys]);
  return distance(unknownKey, candidate) <= Math.max(2, Math.floor(unknownKey.length / 3))
    ? candidate
    : undefined;
}
