import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { LaunchPacing } from "../../src/runs/launch/launch-pacing.js";

/** A pacing on a hand-moved monotonic time, counting the dispatches it asks for. */
function pacingAt(start = 1_000): { pacing: LaunchPacing; move: (milliseconds: number) => void } {
  let now = start;
  const pacing = new LaunchPacing(
    () => undefined,
    () => now,
  );
  return { pacing, move: (milliseconds) => (now += milliseconds) };
}

/** Records `count` new runs in this turn of the event loop, as a group write resolves them. */
function recordInOneTurn(pacing: LaunchPacing, count: number): void {
  for (let index = 0; index < count; index++) pacing.creating();
  for (let index = 0; index < count; index++) pacing.created();
}

describe("LaunchPacing", () => {
  it("launches at once the runs recorded in one turn: the fires due in the same second", () => {
    const { pacing } = pacingAt();
    recordInOneTurn(pacing, 20);
    expect(pacing.holding()).toBe(false);
  });

  it("holds launches while a run's record is being written", () => {
    const { pacing } = pacingAt();
    pacing.creating();
    expect(pacing.holding()).toBe(true);
    pacing.created();
    expect(pacing.holding()).toBe(false);
  });

  it("holds launches while requests record new runs turn after turn, until the stream stops", async () => {
    const { pacing, move } = pacingAt();
    for (let turn = 0; turn < 3; turn++) {
      recordInOneTurn(pacing, 2);
      expect(pacing.holding()).toBe(false);
      await nextTurn();
      move(5);
    }
    recordInOneTurn(pacing, 2);
    expect(pacing.holding()).toBe(true);
    move(49);
    expect(pacing.holding()).toBe(true);
    move(2);
    expect(pacing.holding()).toBe(false);
  });

  it("does not count runs recorded far apart as a burst", async () => {
    const { pacing, move } = pacingAt();
    for (let turn = 0; turn < 10; turn++) {
      recordInOneTurn(pacing, 1);
      expect(pacing.holding()).toBe(false);
      await nextTurn();
      move(60);
    }
  });

  it("launches past the longest hold however long the burst lasts", async () => {
    const { pacing, move } = pacingAt();
    let held = 0;
    for (let turn = 0; turn < 30; turn++) {
      recordInOneTurn(pacing, 1);
      if (pacing.holding()) held += 1;
      else if (held > 0) break;
      await nextTurn();
      move(30);
    }
    // Held from the fourth turn, for less than 500 ms of 30 ms turns.
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(Math.ceil(500 / 30));
  });
});
