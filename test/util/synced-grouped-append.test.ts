import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SyncedGroupedAppend } from "../../src/util/synced-grouped-append.js";

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(path.join(os.tmpdir(), "agentd-synced-append-"));
});
afterEach(() => {
  rmSync(folder, { recursive: true, force: true });
});

describe("SyncedGroupedAppend", () => {
  it("answers every append after one that failed, and writes them once the file can be written", async () => {
    // The audit folder's place held by a file (or the disk full when the day's file is made): the
    // first group fails before any flush. Each later append must be answered too, never left
    // waiting: a run's POST awaits its audit entry.
    const blocked = path.join(folder, "audit");
    writeFileSync(blocked, "");
    const appends = new SyncedGroupedAppend();
    const file = path.join(blocked, "2026-11-30.jsonl");
    await expect(appends.append(file, "first")).rejects.toMatchObject({ code: "STORE_WRITE_FAILED" });
    await expect(appends.append(file, "second")).rejects.toMatchObject({ code: "STORE_WRITE_FAILED" });
    rmSync(blocked);
    await appends.append(file, "third");
    await appends.close();
    expect(readFileSync(file, "utf8")).toBe("third\n");
  });
});
