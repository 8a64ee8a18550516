import pino from "pino";
import { describe, expect, it } from "vitest";
import type { AuditLog } from "../../src/access/audit-log.js";
import { AuditRecorder } from "../../src/access/audit-recorder.js";
import { StorageState } from "../../src/store/storage-state.js";
import { storeWriteFailed } from "../../src/util/whole-append.js";

const logger = pino({ level: "silent" });

/** An audit trail on a disk with no room left: every append fails with ENOSPC. */
const fullLog: AuditLog = {
  append: () => {
    const error = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    return Promise.reject(storeWriteFailed("/data/audit/2026-11-30.jsonl", error));
  },
  page: () => Promise.resolve([]),
  prune: () => Promise.resolve(0),
};

describe("AuditRecorder", () => {
  it("makes the store full when an entry is refused for lack of room", async () => {
    const storage = new StorageState({
      probe: () => Promise.reject(new Error("still full")),
      root: "/data",
      logger,
    });
    const recorder = new AuditRecorder({ log: fullLog, logger, storage });

    expect(
      await recorder.record({
        action: "run.start",
        actor: { kind: "token", name: "default" },
        agent: "writer",
      }),
    ).toBeUndefined();

    expect(storage.full).toBe(true);
    expect(storage.healthReasons()).toMatchObject([
      { code: "STORAGE_FULL", error: "ENOSPC", file: "audit/2026-11-30.jsonl" },
    ]);
    storage.close();
  });
});
