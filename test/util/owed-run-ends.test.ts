import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OwedRunEnds } from "../../src/util/owed-run-ends.js";
import { type StorageGate, spaceFailureOf } from "../../src/util/storage-gate.js";

/** Lets the end of this turn's grouped write happen. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A storage gate as the files store's: full at a write refused for lack of room, until told of room. */
class SpaceGate implements StorageGate {
  full = false;
  readonly refused: string[] = [];
  #room: (() => void) | undefined;
  #writable: Promise<void> = Promise.resolve();

  failed(error: unknown): boolean {
    const failure = spaceFailureOf(error);
    if (failure === undefined) return false;
    this.refused.push(failure.code);
    if (!this.full) {
      this.full = true;
      this.#writable = new Promise((resolve) => (this.#room = resolve));
    }
    return true;
  }

  succeeded(): void {}

  whenWritable(): Promise<void> {
    return this.#writable;
  }

  roomAgain(): void {
    this.full = false;
    this.#room?.();
  }
}

describe("OwedRunEnds", () => {
  let directory: string;
  let file: string;

  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), "agentd-owed-run-ends-"));
    file = path.join(directory, "follow-ups", "deliveries.jsonl");
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("gives back at the next load the runs marked owed and not done, with their node", async () => {
    const first = new OwedRunEnds(file, "node-a");
    expect(first.load()).toEqual([]);
    first.owe("r_1");
    first.owe("r_2");
    first.owe("r_2");
    first.done("r_1");
    await nextTurn();
    // No close: as after a kill -9, only what reached the file counts.
    expect(new OwedRunEnds(file).load()).toEqual([{ run: "r_2", node: "node-a" }]);
  });

  it("begins the file afresh with the owed runs alone, skipping a torn last line", async () => {
    const first = new OwedRunEnds(file);
    first.load();
    for (let run = 0; run < 5; run++) first.owe(`r_${run}`);
    for (let run = 0; run < 4; run++) first.done(`r_${run}`);
    await nextTurn();
    appendFileSync(file, '{"owed":"r_9');
    const second = new OwedRunEnds(file);
    expect(second.load()).toEqual([{ run: "r_4" }]);
    expect(readFileSync(file, "utf8")).toBe('{"owed":"r_4"}\n');
    second.done("r_4");
    second.close();
    expect(new OwedRunEnds(file).load()).toEqual([]);
  });

  it("tells the storage gate of a mark refused for lack of room, and writes it once there is room", async () => {
    const gate = new SpaceGate();
    const first = new OwedRunEnds(file, undefined, gate);
    first.load();
    // Every write to the file from now on is refused for lack of room (ENOSPC).
    rmSync(file);
    symlinkSync("/dev/full", file);
    first.owe("r_1");
    await nextTurn();
    expect(gate.full).toBe(true);
    expect(gate.refused).toContain("ENOSPC");
    // Made while the store is full: kept in memory, written once there is room.
    first.owe("r_2");
    first.done("r_1");
    await nextTurn();
    gate.roomAgain();
    await nextTurn();
    expect(lstatSync(file).isFile()).toBe(true);
    expect(readFileSync(file, "utf8")).toBe('{"owed":"r_2"}\n');
    first.owe("r_3");
    await nextTurn();
    expect(new OwedRunEnds(file).load()).toEqual([{ run: "r_2" }, { run: "r_3" }]);
  });

  it("refuses a FIFO in the journal's place with an error naming it, instead of waiting for ever", () => {
    mkdirSync(path.dirname(file), { recursive: true });
    execFileSync("mkfifo", [file]);
    expect(() => new OwedRunEnds(file).load()).toThrow(
      expect.objectContaining({ code: "STORE_CORRUPT", message: expect.stringContaining(file) }),
    );
  });
});
