import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { someDirectoryEntry } from "../../src/util/some-directory-entry.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const made = mkdtempSync(path.join(tmpdir(), "agentd-some-entry-"));
  folders.push(made);
  return made;
}

describe("someDirectoryEntry", () => {
  it("says whether a folder holds anything, or anything that passes the test", () => {
    const runs = folder();
    expect(someDirectoryEntry(runs)).toBe(false);
    mkdirSync(path.join(runs, "index"));
    expect(someDirectoryEntry(runs)).toBe(true);
    expect(someDirectoryEntry(runs, (name) => name.endsWith(".json"))).toBe(false);
    for (let index = 0; index < 500; index++) writeFileSync(path.join(runs, `r_${index}.events.jsonl`), "");
    writeFileSync(path.join(runs, "r_7.json"), "{}");
    expect(someDirectoryEntry(runs, (name) => name.endsWith(".json"))).toBe(true);
  });

  it("stops at the first entry that passes", () => {
    const runs = folder();
    for (let index = 0; index < 200; index++) writeFileSync(path.join(runs, `r_${index}.json`), "");
    let asked = 0;
    expect(someDirectoryEntry(runs, () => (asked += 1) > 0)).toBe(true);
    expect(asked).toBe(1);
  });

  it("is false for a folder that is missing or a file", () => {
    const parent = folder();
    expect(someDirectoryEntry(path.join(parent, "missing"))).toBe(false);
    writeFileSync(path.join(parent, "file"), "");
    expect(someDirectoryEntry(path.join(parent, "file"))).toBe(false);
  });
});
