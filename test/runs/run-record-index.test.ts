import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/run-vocabulary/run-record.js";
import { RunRecordIndex } from "../../src/runs/run-record-index.js";
import { queuedRecord } from "./queued-record.js";

function record(id: string, createdAt: string, status: RunRecord["status"] = "queued"): RunRecord {
  return { ...queuedRecord(id, "alpha", createdAt), status };
}

describe("RunRecordIndex", () => {
  it("keeps the agent's newest run by creation time when another node's older run arrives later", () => {
    const index = new RunRecordIndex();
    index.put(record("r_new", "2026-11-24T10:00:02.000Z"));
    index.put(record("r_old", "2026-11-24T10:00:01.000Z"));
    expect(index.lastOf("alpha")?.id).toBe("r_new");
    expect(index.all().map((run) => run.id)).toEqual(["r_new", "r_old"]);
  });

  it("makes the later of two runs created in the same millisecond the newest, and an update never changes that", () => {
    const index = new RunRecordIndex();
    const sameTime = "2026-11-24T10:00:01.000Z";
    index.put(record("r_first", sameTime));
    index.put(record("r_second", sameTime));
    expect(index.lastOf("alpha")?.id).toBe("r_second");
    index.put(record("r_first", sameTime, "completed"));
    expect(index.lastOf("alpha")?.id).toBe("r_second");
    expect(index.get("r_first")?.status).toBe("completed");
  });
});
