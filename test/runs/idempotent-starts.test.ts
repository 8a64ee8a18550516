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

  it("still answers a key's run after a restart when the clock was set back more than 48 h meanwhile", async () => {
    const dataDirectory = mkdtempSync(path.join(tmpdir(), "agentd-idempotent-"));
    const store = RunStore.open({ dataDirectory, logger });
    const posted = Date.parse("2026-03-01T10:00:00.000Z");
    await store.create({
      ...queuedRecord("r_1", "alpha", new Date(posted).toISOString()),
      idempotency_key: "k",
    });
    // The clock is set back 50 h (a VM restored, a wrong NTP server) and runs are made then.
    const setBack = posted - 50 * 60 * 60 * 1_000;
    for (let made = 2; made <= 4; made++) {
      await store.create(queuedRecord(`r_${made}`, "alpha", new Date(setBack + made).toISOString()));
    }
    const restartedWhileBack = RunStore.open({ dataDirectory, logger });
    const whileBack = new IdempotentStarts(restartedWhileBack, () => new Date(setBack + 60_000));
    expect(whileBack.recorded("alpha", "k")?.id).toBe("r_1");

    // Corrected to the right time, a run is made, and the daemon restarts: a minute after the key's
    // run for the caller, who sends the key again.
    const corrected = posted + 60_000;
    await restartedWhileBack.create(queuedRecord("r_5", "alpha", new Date(corrected).toISOString()));
    const restarted = RunStore.open({ dataDirectory, logger });
    const starts = new IdempotentStarts(restarted, () => new Date(corrected + 60_000));
    const again = await starts.start("alpha", "k", () => Promise.reject(new Error("a second run was made")));
    expect(again).toMatchObject({ run: { id: "r_1" }, duplicate: true });
  });
});
