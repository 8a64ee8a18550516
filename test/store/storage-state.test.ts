import { describe, expect, it } from "vitest";
import { AgentdError } from "../../src/errors/agentd-error.js";
import { EventBus } from "../../src/events/event-bus.js";
import type { AgentEvent } from "../../src/events/agent-event.js";
import { createLogger } from "../../src/logging/logger.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { StorageState } from "../../src/store/storage-state.js";
import { spaceFailureOf } from "../../src/util/storage-gate.js";

const logger = createLogger({ level: "silent", pretty: false });

function errnoError(code: string, file?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: no room`), {
    code,
    ...(file === undefined ? {} : { path: file }),
  });
}

/** A storage state whose probe succeeds once `room` is set. */
function storageWithRoom(): { storage: StorageState; room: { free: boolean } } {
  const room = { free: false };
  const storage = new StorageState({
    probe: () => (room.free ? Promise.resolve() : Promise.reject(errnoError("ENOSPC"))),
    probeIntervalMilliseconds: 5,
    root: "/data",
    logger,
  });
  return { storage, room };
}

describe("spaceFailureOf", () => {
  it("finds ENOSPC, EDQUOT, EROFS and the SQLSTATEs along the cause chain, with the nearest file", () => {
    const wrapped = new AgentdError("STORE_WRITE_FAILED", "could not write", {
      file: "/data/events/a.jsonl",
      cause: errnoError("ENOSPC"),
    });
    expect(spaceFailureOf(wrapped)).toMatchObject({ code: "ENOSPC", file: "/data/events/a.jsonl" });
    expect(spaceFailureOf(errnoError("EDQUOT", "/data/x"))).toMatchObject({
      code: "EDQUOT",
      file: "/data/x",
    });
    // What Node 20 really gives for a write over a quota (its libuv has no name for errno 122):
    // `UNKNOWN` from the sync API, `Unknown system error -122` from the promise API.
    for (const code of ["UNKNOWN", "Unknown system error -122"]) {
      const overQuota = Object.assign(errnoError(code, "/data/y"), { errno: -122 });
      expect(spaceFailureOf(overQuota)).toMatchObject({ code: "EDQUOT", file: "/data/y" });
    }
    expect(spaceFailureOf(Object.assign(errnoError("UNKNOWN"), { errno: -5 }))).toBeUndefined();
    expect(spaceFailureOf(new Error("outer", { cause: errnoError("EROFS") }))?.code).toBe("EROFS");
    expect(spaceFailureOf(Object.assign(new Error("disk full"), { code: "53100" }))?.code).toBe("53100");
    expect(spaceFailureOf(errnoError("EACCES"))).toBeUndefined();
    expect(spaceFailureOf("ENOSPC")).toBeUndefined();
  });
});

describe("StorageState", () => {
  it("turns full on a space failure only, says why without the host's path, and recovers through its probe", async () => {
    const { storage, room } = storageWithRoom();
    const changes: boolean[] = [];
    storage.onChange((full) => changes.push(full));
    expect(storage.failed(errnoError("EACCES"))).toBe(false);
    expect(storage.full).toBe(false);
    expect(storage.failed(errnoError("ENOSPC"), "/data/runs/index.jsonl")).toBe(true);
    expect(storage.failed(errnoError("ENOSPC"), "/data/other")).toBe(true);
    expect(storage.healthReasons()).toEqual([
      expect.objectContaining({ code: "STORAGE_FULL", error: "ENOSPC", file: "runs/index.jsonl" }),
    ]);
    const writable = storage.whenWritable();
    room.free = true;
    await writable;
    expect(storage.full).toBe(false);
    expect(storage.healthReasons()).toEqual([]);
    expect(changes).toEqual([true, false]);
    expect(storage.episodes).toBe(1);
    storage.close();
  });

  it("probes for the largest write that failed in the episode, and forgets it once the episode ends", async () => {
    const asked: number[] = [];
    let free = 100_000;
    const storage = new StorageState({
      probe: (bytes) => {
        asked.push(bytes);
        return bytes <= free ? Promise.resolve() : Promise.reject(errnoError("ENOSPC"));
      },
      probeIntervalMilliseconds: 5,
      logger,
    });
    storage.failed(errnoError("ENOSPC"), "/data/events/a.jsonl", 1_000_000);
    storage.failed(errnoError("ENOSPC"), "/data/runs/r.json", 2_000);
    await new Promise((resolve) => setTimeout(resolve, 40));
    // The probe's 64 KB would fit; the held 1 MB write would not: still one episode, still full.
    expect(storage.full).toBe(true);
    expect(storage.episodes).toBe(1);
    expect(asked.every((bytes) => bytes === 1_000_000)).toBe(true);
    free = 2_000_000;
    await storage.whenWritable();
    storage.failed(errnoError("ENOSPC"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked.at(-1)).toBe(0);
    storage.close();
  });

  it("fails the writes still waiting for room when it closes", async () => {
    const { storage } = storageWithRoom();
    storage.failed(errnoError("ENOSPC"));
    const writable = storage.whenWritable();
    storage.close();
    await expect(writable).rejects.toMatchObject({ code: "STORAGE_FULL" });
  });
});

describe("EventBus while the store is full", () => {
  it("holds an event the store refuses, and every one after it, unseen, then hands them on in order", () => {
    const bus = new EventBus();
    let full = true;
    const stored: number[] = [];
    const seen: number[] = [];
    bus.subscribe((event: AgentEvent) => {
      if (full) throw new AgentdError("STORAGE_FULL", "no room");
      stored.push(event.id);
    });
    bus.subscribe((event: AgentEvent) => seen.push(event.id));
    for (let index = 0; index < 3; index++)
      bus.publish({ agent: "a", run: null, type: "warning", data: { code: "X", message: "m" } } as never);
    expect({ stored, seen, held: bus.held }).toEqual({ stored: [], seen: [], held: 3 });
    bus.releaseHeld();
    expect(bus.held).toBe(3);
    full = false;
    bus.releaseHeld();
    bus.publish({ agent: "a", run: null, type: "warning", data: { code: "X", message: "m" } } as never);
    expect({ stored, seen, held: bus.held }).toEqual({ stored: [1, 2, 3, 4], seen: [1, 2, 3, 4], held: 0 });
  });
});

describe("RunControl held for storage", () => {
  it("halts apart from a user's pause: each is lifted on its own", async () => {
    const control = new RunControl();
    const told: boolean[] = [];
    control.onPauseChange((paused) => told.push(paused));
    control.holdForStorage();
    control.pause();
    let goneOn = false;
    const waiting = control.waitWhilePaused().then(() => (goneOn = true));
    control.releaseStorage();
    await Promise.resolve();
    expect({ goneOn, halted: control.halted, paused: control.paused }).toEqual({
      goneOn: false,
      halted: true,
      paused: true,
    });
    control.resume();
    await waiting;
    expect(told).toEqual([true, false]);
    control.dispose();
  });
});
