import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { IDEMPOTENCY_WINDOW_MILLISECONDS, IdempotentStarts } from "../../src/runs/queue/idempotent-starts.js";
import { RunStore } from "../../src/runs/run-store.js";
import { queuedRecord } from "./queued-record.js";

const logger = createLogger({ level: "silent", pretty: false });

describe("IdempotentStarts", () => {
  it("answers a key's run within the window, and makes a new one after it", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-idempotent-"));
    const store = RunStore.open({ dataDirectory, logger });
    let now = Date.parse("2026-03-01T10:00:00.000Z");
    const starts = new IdempotentStarts(store, () => new Date(now));
    let made = 0;
    const create = async () => {
      made += 1;
      const run = {
        ...queuedRecord(`r_${made}`, "alpha", new Date(now).toISOString()),
        idempotency_key: "k",
      };
      await store.create(run);
      return { run, duplicate: false };
    };
    const first = await starts.start("alpha", "k", create);
    expect(first.duplicate).toBe(false);
    now += IDEMPOTENCY_WINDOW_MILLISECONDS - 1;
    expect(await starts.start("alpha", "k", create)).toEqual({ run: first.run, duplicate: true });
    now += 1;
    const later = await starts.start("alpha", "k", create);
    expect(later).toMatchObject({ run: { id: "r_2" }, duplicate: false });
    // The newest run of the key is the one kept, also after a restart.
    expect(RunStore.open({ dataDirectory, logger }).findByIdempotencyKey("alpha", "k")?.id).toBe("r_2");
    expect(store.findByIdempotencyKey("beta", "k")).toBeUndefined();
  });
});
