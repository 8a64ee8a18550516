import path from "node:path";
import { describe, expect, it } from "vitest";
import { isWithin } from "../../src/util/path-within.js";

/** What isWithin stands in for: the answer path.relative gives. */
function byRelative(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return (
    relative === "" ||
    !(relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
  );
}

const PATHS = [
  "/",
  "/a",
  "/a/b",
  "/a/b/",
  "/a/bc",
  "/a/b/c",
  "/ab",
  "/a//b",
  "/a/./b",
  "/a/../b",
  "/a/b/..",
  "/a/b/.",
  "/a/.git",
  "/a/.git/hooks",
  "/a/..b",
  "/a/b/c/../../b/c",
  "a",
  "a/b",
  "./a",
  "",
  ".",
  "..",
  "../a",
  path.join(process.cwd(), "a"),
  process.cwd(),
];

describe("isWithin", () => {
  it("answers as path.relative does for every pair of paths, relative and unnormalised ones too", () => {
    const disagreements: string[] = [];
    for (const inner of PATHS) {
      for (const outer of PATHS) {
        if (isWithin(inner, outer) !== byRelative(inner, outer)) disagreements.push(`${inner} in ${outer}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it("holds a path and what lies below it, not a sibling sharing its prefix", () => {
    expect(isWithin("/srv/work/note.txt", "/srv/work")).toBe(true);
    expect(isWithin("/srv/work", "/srv/work")).toBe(true);
    expect(isWithin("/srv/workspace", "/srv/work")).toBe(false);
    expect(isWithin("/srv", "/srv/work")).toBe(false);
    expect(isWithin("/srv/work/../other", "/srv/work")).toBe(false);
    expect(isWithin("/anything", "/")).toBe(true);
  });
});
