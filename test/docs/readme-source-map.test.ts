import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The folders the README's source map names under `src/`: lines of the map's code block. */
function mappedFolders(): string[] {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const map = /^## Where things are\n\n```\n(src\/\n[\s\S]*?)```/m.exec(readme)?.[1] ?? "";
  return [...map.matchAll(/^ {2}([a-z][a-z-]*)\/ /gm)].map((match) => match[1] ?? "");
}

describe("the README's source map", () => {
  it("names every folder of src/, and only folders that exist", () => {
    const folders = readdirSync(path.join(ROOT, "src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const mapped = mappedFolders();
    expect(mapped.length).toBeGreaterThan(10);
    // A new folder under src/ needs a line in the README's "Where things are" map, saying what it holds.
    expect({
      missing: folders.filter((folder) => !mapped.includes(folder)),
      unknown: mapped.filter((folder) => !folders.includes(folder)),
    }).toEqual({ missing: [], unknown: [] });
  });
});
