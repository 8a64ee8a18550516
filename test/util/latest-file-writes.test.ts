import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LatestFileWrites } from "../../src/util/latest-file-writes.js";

function folder(): string {
  return mkdtempSync(path.join(tmpdir(), "agentd-latest-writes-"));
}

describe("LatestFileWrites", () => {
  it("lands every content of a file in the order written, without merging, and leaves no temp file", async () => {
    const directory = folder();
    const file = path.join(directory, "record.json");
    const writes = new LatestFileWrites({ merge: false });
    const seen: string[] = [];
    const all = ["one", "two", "three"].map((text) =>
      writes.write(file, text, { sync: false }).then(() => seen.push(readFileSync(file, "utf8"))),
    );
    // Asked for but not landed yet: what the file is about to hold.
    expect(writes.pending(file)).toBe("three");
    await Promise.all(all);
    // Each caller found its own content in place when its promise resolved.
    expect(seen).toEqual(["one", "two", "three"]);
    expect(writes.pending(file)).toBeUndefined();
    expect(readdirSync(directory)).toEqual(["record.json"]);
  });

  it("merges the changes waiting behind a write into the newest: an older content never lands last", async () => {
    const directory = folder();
    const file = path.join(directory, "checkpoint.json");
    const writes = new LatestFileWrites();
    const landed = await Promise.all(
      ["1", "2", "3", "4"].map((text) => writes.write(file, text).then(() => readFileSync(file, "utf8"))),
    );
    // The first was under way; 2 and 3 were replaced by 4 before their turn.
    expect(landed).toEqual(["1", "4", "4", "4"]);
  });

  it("removes a file after the writes asked before, and makes the folder at the first write", async () => {
    const directory = path.join(folder(), "checkpoints");
    const file = path.join(directory, "r_1.json");
    const writes = new LatestFileWrites();
    void writes.write(file, "state");
    const removed = writes.remove(file);
    expect(writes.pending(file)).toBeNull();
    await removed;
    expect(existsSync(file)).toBe(false);
    await writes.write(file, "again");
    expect(readFileSync(file, "utf8")).toBe("again");
  });

  it("rejects the callers of a write that fails, and goes on with the next", async () => {
    const directory = folder();
    const writes = new LatestFileWrites({ merge: false });
    // A folder in the way of the rename: the write fails.
    const blocked = path.join(directory, "blocked");
    await writes.write(path.join(blocked, "inner"), "x");
    const failed = writes.write(blocked, "y");
    const next = writes.write(path.join(directory, "fine"), "z");
    await expect(failed).rejects.toThrow();
    await next;
    await writes.settled();
    expect(readFileSync(path.join(directory, "fine"), "utf8")).toBe("z");
    expect(writes.size).toBe(0);
  });
});
