import { appendFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { RunStore } from "../../src/runs/run-store.js";
import { queuedRecord } from "./queued-record.js";

const logger = createLogger({ level: "silent", pretty: false });

describe("RunStore", () => {
  // Creating, listing and reading back after a restart: test/store/durable-store.test.ts, for both stores.
  it("keeps a queued run as its index line alone, and reads it back after a restart", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
    const store = RunStore.open({ dataDirectory, logger });
    await store.create(queuedRecord("r_queued"));
    // A queued run has no record file yet: its index line is enough for a restart.
    expect(existsSync(path.join(store.directory, "r_queued.json"))).toBe(false);
    expect(RunStore.open({ dataDirectory, logger }).get("r_queued")).toEqual(store.get("r_queued"));
  });

  it("prefers the record file once the run changed, and ends a torn last index line", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
    const store = RunStore.open({ dataDirectory, logger });
    const record = queuedRecord("r_changed");
    await store.create(record);
    await store.save({ ...record, status: "running", started_at: new Date().toISOString() });
    const indexFile = path.join(store.directory, "index.jsonl");
    appendFileSync(indexFile, '{"run":"r_torn","agent":"alp');

    const reopened = RunStore.open({ dataDirectory, logger });
    expect(reopened.get("r_changed")?.status).toBe("running");
    expect(reopened.get("r_torn")).toBeUndefined();
    await reopened.create(queuedRecord("r_after"));
    expect(RunStore.open({ dataDirectory, logger }).get("r_after")?.status).toBe("queued");
    expect(readFileSync(indexFile, "utf8").endsWith("\n")).toBe(true);
  });

  it("counts the writes accepted and not yet on disk", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
    const store = RunStore.open({ dataDirectory, logger });
    expect(store.pendingWrites).toBe(0);
    const created = [store.create(queuedRecord("r_one")), store.create(queuedRecord("r_two"))];
    expect(store.pendingWrites).toBe(2);
    await Promise.all(created);
    const record = queuedRecord("r_one");
    const saved = store.save({ ...record, status: "running", started_at: new Date().toISOString() });
    expect(store.pendingWrites).toBe(1);
    await saved;
    await store.settled();
    expect(store.pendingWrites).toBe(0);
  });
});
