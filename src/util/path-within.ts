import path from "node:path";

/**
 * True when `inner` is `outer` or lies below it, both resolved as `path.resolve` does (a relative
 * path against the working directory). The same answer as comparing with `path.relative`, at a
 * fifth of its cost: the sandbox and the file tools ask it dozens of times per tool call, and a
 * path already written as `path.resolve` writes it (absolute, no `.`/`..`, no doubled or trailing
 * slash) is compared as it is, without being resolved again.
 */
export function isWithin(inner: string, outer: string): boolean {
  return isWithinResolved(resolvedForm(inner), resolvedForm(outer));
}

/**
 * `isWithin` for two paths already written as `path.resolve` writes them, compared as they are:
 * for a caller that checks one path against many it resolved once.
 */
export function isWithinResolved(inner: string, outer: string): boolean {
  if (inner === outer || outer === "/") return true;
  return inner.length > outer.length && inner.charCodeAt(outer.length) === SLASH && inner.startsWith(outer);
}

const SLASH = 0x2f;

/**
 * `entry` itself when `path.resolve` would write it the same (absolute, without a trailing or
 * doubled slash and without a component starting with a dot, which covers `.` and `..`); else
 * `path.resolve(entry)`. A name like `.git` only takes the slower way.
 */
function resolvedForm(entry: string): string {
  if (entry.charCodeAt(0) !== SLASH) return path.resolve(entry);
  if (entry.length === 1) return entry;
  if (entry.charCodeAt(entry.length - 1) === SLASH || entry.includes("//") || entry.includes("/.")) {
    return path.resolve(entry);
  }
  return entry;
}
