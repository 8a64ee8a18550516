import { appendFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import type { RunRecord } from "../../src/runs/run-record.js";
import { EMPTY_USAGE } from "../../src/runs/run-status.js";
import { RunStore } from "../../src/runs/run-store.js";

const logger = createLogger({ level: "silent", pretty: false });

function queuedRecord(id: string, agent = "alpha"): RunRecord {
  return {
    id,
    agent,
    task: `task of ${id}`,
    status: "queued",
    trigger: { kind: "api" },
    definition_hash: "hash",
    created_at: new Date().toISOString(),
    usage: EMPTY_USAGE,
    cost_usd: 0,
  };
}

describe("RunStore", () => {
  it("creates runs started together in order, lists them once written, and reads them back after a restart", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
    const store = RunStore.open({ dataDirectory, logger });
    const ids = Array.from({ length: 200 }, (_, index) => `r_${index.toString(36).padStart(4, "0")}`);
    const created = ids.map((id) => store.create(queuedRecord(id)));
    // Listed only once written: nothing reports a run a crash could lose.
    expect(store.get(ids[0] ?? "")).toBeUndefined();
    await Promise.all(created);
    expect(store.all().map((record) => record.id)).toEqual(ids);
    expect(store.lastOf("alpha")?.id).toBe(ids.at(-1));
    // A queued run has no record file yet: its index line is enough for a restart.
    expect(existsSync(path.join(store.directory, `${ids[0]}.json`))).toBe(false);
    const reopened = RunStore.open({ dataDirectory, logger });
    expect(reopened.all()).toEqual(store.all());
  });

  it("prefers the record file once the run changed, and ends a torn last index line", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-run-store-"));
    const store = RunStore.open({ dataDirectory, logger });
    const record = queuedRecord("r_changed");
    await store.create(record);
    store.save({ ...record, status: "running", started_at: new Date().toISOString() });
    const indexFile = path.join(store.directory, "index.jsonl");
    appendFileSync(indexFile, '{"run":"r_torn","agent":"alp');

    const reopened = RunStore.open({ dataDirectory, logger });
    expect(reopened.get("r_changed")?.status).toBe("running");
    expect(reopened.get("r_torn")).toBeUndefined();
    await reopened.create(queuedRecord("r_after"));
    expect(RunStore.open({ dataDirectory, logger }).get("r_after")?.status).toBe("queued");
    expect(readFileSync(indexFile, "utf8").endsWith("\n")).toBe(true);
  });
});
