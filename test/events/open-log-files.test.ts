import { mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OpenLogFiles } from "../../src/events/open-log-files.js";

let directory: string;
afterEach(() => rmSync(directory, { recursive: true, force: true }));

/** Descriptors this process holds on files of `folder` (Linux /proc). */
function openIn(folder: string): number {
  let count = 0;
  for (const descriptor of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${descriptor}`).startsWith(folder)) count += 1;
    } catch {
      // Closed while listing.
    }
  }
  return count;
}

describe("open log files", () => {
  it("appends every line in order across more files than it keeps open, and closes them all", () => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-logs-"));
    const files = new OpenLogFiles(3);
    for (let round = 0; round < 4; round++) {
      for (let index = 0; index < 5; index++)
        files.append(path.join(directory, `${index}.jsonl`), `${round}\n`);
    }
    for (let index = 0; index < 5; index++) {
      expect(readFileSync(path.join(directory, `${index}.jsonl`), "utf8")).toBe("0\n1\n2\n3\n");
    }
    expect(openIn(directory)).toBe(3);
    files.close(path.join(directory, "4.jsonl"));
    expect(openIn(directory)).toBe(2);
    files.closeAll();
    expect(openIn(directory)).toBe(0);
  });
});

describe("adopted descriptors", () => {
  it("appends through a descriptor opened elsewhere, and closes a second one for the same file", () => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-logs-"));
    const files = new OpenLogFiles(3);
    const file = path.join(directory, "run.jsonl");
    files.adopt(file, openSync(file, "a", 0o600));
    files.adopt(file, openSync(file, "a", 0o600));
    expect(openIn(directory)).toBe(1);
    files.append(file, "first\n");
    files.append(file, "second\n");
    expect(readFileSync(file, "utf8")).toBe("first\nsecond\n");
    files.closeAll();
    expect(openIn(directory)).toBe(0);
  });
});
