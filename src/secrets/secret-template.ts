/** `{{secret:name}}` in a tool argument or a config value: replaced by the vault value just before use. */
export const SECRET_TEMPLATE = /\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}/g;

/** Every secret name referenced in a value (strings, arrays and objects, deeply), each once. */
export function secretNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  visitStrings(value, (text) => {
    for (const match of text.matchAll(SECRET_TEMPLATE)) names.add(match[1] as string);
    return text;
  });
  return [...names];
}

/** A copy of `value` with every `{{secret:name}}` in its strings replaced by `replace(name)`. */
export function substituteSecrets<Value>(value: Value, replace: (name: string) => string): Value {
  return visitStrings(value, (text) =>
    text.replace(SECRET_TEMPLATE, (_match, name: string) => replace(name)),
  );
}

/** Maps every string inside a JSON-like value, keeping its shape. */
export function visitStrings<Value>(value: Value, map: (text: string) => string): Value {
  if (typeof value === "string") return map(value) as Value;
  if (Array.isArray(value)) return value.map((item: unknown) => visitStrings(item, map)) as Value;
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = visitStrings(item, map);
    return copy as Value;
  }
  return value;
}
