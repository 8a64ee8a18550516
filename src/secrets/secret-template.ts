/** `{{secret:name}}` in a tool argument or a config value: replaced by the vault value just before use. */
export const SECRET_TEMPLATE = /\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}/g;

/** Every secret name referenced in a value (strings, arrays and objects, deeply), each once. */
export function secretNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  forEachString(value, (text) => {
    // Every reference holds "secret:": a string without it (nearly all of them) is not searched.
    if (!text.includes("secret:")) return;
    for (const match of text.matchAll(SECRET_TEMPLATE)) names.add(match[1] as string);
  });
  return [...names];
}

/**
 * Calls `visit` with every string inside a JSON-like value, deeply, copying nothing: every tool
 * call's arguments are searched for references, and almost none hold one.
 */
function forEachString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const item of value) forEachString(item, visit);
  else if (value !== null && typeof value === "object") {
    for (const key in value) {
      if (Object.hasOwn(value, key)) forEachString((value as Record<string, unknown>)[key], visit);
    }
  }
}

/** A copy of `value` with every `{{secret:name}}` in its strings replaced by `replace(name)`. */
export function substituteSecrets<Value>(value: Value, replace: (name: string) => string): Value {
  return visitStrings(value, (text) =>
    text.replace(SECRET_TEMPLATE, (_match, name: string) => replace(name)),
  );
}

/**
 * Maps every string inside a JSON-like value, keeping its shape. Arrays and plain objects in which
 * no string changed come back as they are, not copied: every event and checkpoint of a run is
 * masked, and nearly none holds a secret. Any other object (a Date, an error) is copied to a plain
 * object of its own enumerable fields, as before.
 */
export function visitStrings<Value>(value: Value, map: (text: string) => string): Value {
  if (typeof value === "string") return map(value) as Value;
  if (Array.isArray(value)) return mapArray(value, map) as Value;
  if (value !== null && typeof value === "object") {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === null) {
      return mapPlainObject(value as Record<string, unknown>, map) as Value;
    }
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = visitStrings(item, map);
    return copy as Value;
  }
  return value;
}

/** `items` itself when no string in it changed, else a copy. */
function mapArray(items: readonly unknown[], map: (text: string) => string): readonly unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index];
    const mapped = visitStrings(item, map);
    if (copy === undefined && mapped !== item) copy = items.slice(0, index);
    copy?.push(mapped);
  }
  return copy ?? items;
}

/** `object` itself when no string in it changed, else a copy (its own enumerable fields, in order). */
function mapPlainObject(
  object: Record<string, unknown>,
  map: (text: string) => string,
): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = object[key];
    const mapped = visitStrings(item, map);
    if (copy === undefined && mapped !== item) {
      copy = {};
      for (const earlier in object) {
        if (earlier === key) break;
        if (Object.hasOwn(object, earlier)) copy[earlier] = object[earlier];
      }
    }
    if (copy !== undefined) copy[key] = mapped;
  }
  return copy ?? object;
}
