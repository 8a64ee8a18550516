import { beforeEach, describe, expect, it } from "vitest";
import { runReasonOf } from "../../src/run-vocabulary/abort-ending.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";
import { ManualClock } from "../support/manual-clock.js";

// A clock moved by hand: the time that passes while a run is paused is the point of these tests.
let clock: ManualClock;
beforeEach(() => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
});

describe("RunControl timeout", () => {
  it("counts working time only: time paused does not count", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000, clock });
    clock.advanceBy(600);
    control.pause();
    clock.advanceBy(60_000);
    expect(control.signal.aborted).toBe(false);
    expect(control.remainingMilliseconds()).toBe(400);
    control.resume();
    clock.advanceBy(399);
    expect(control.signal.aborted).toBe(false);
    clock.advanceBy(1);
    expect(runReasonOf(control.signal)).toBe("timeout");
  });

  it("does not count time waiting for an approval, even when a pause overlaps it", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000, clock });
    clock.advanceBy(500);
    control.holdClock("waiting");
    clock.advanceBy(10_000);
    control.pause();
    control.releaseClock("waiting");
    clock.advanceBy(10_000);
    expect(control.signal.aborted).toBe(false);
    control.resume();
    clock.advanceBy(499);
    expect(control.signal.aborted).toBe(false);
    clock.advanceBy(1);
    expect(runReasonOf(control.signal)).toBe("timeout");
  });

  it("a stopped run's clock does not start again on resume", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000, clock });
    control.holdClock("waiting");
    control.stop("user_stop");
    control.releaseClock("waiting");
    clock.advanceBy(5_000);
    expect(runReasonOf(control.signal)).toBe("user_stop");
  });

  it("a stopped run's timer is cancelled: nothing is left waiting on the clock", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000, clock });
    expect(clock.pending).toBe(1);
    control.stop("user_stop");
    expect(clock.pending).toBe(0);
    expect(control.remainingMilliseconds()).toBe(1_000);
  });
});
