import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runReasonOf } from "../../src/run-vocabulary/abort-ending.js";
import { RunControl } from "../../src/run-vocabulary/run-control.js";

// A fake clock: the time that passes while a run is paused is the point of these tests.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("RunControl timeout", () => {
  it("counts working time only: time paused does not count", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000 });
    vi.advanceTimersByTime(600);
    control.pause();
    vi.advanceTimersByTime(60_000);
    expect(control.signal.aborted).toBe(false);
    expect(control.remainingMilliseconds()).toBe(400);
    control.resume();
    vi.advanceTimersByTime(399);
    expect(control.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(runReasonOf(control.signal)).toBe("timeout");
  });

  it("does not count time waiting for an approval, even when a pause overlaps it", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000 });
    vi.advanceTimersByTime(500);
    control.holdClock("waiting");
    vi.advanceTimersByTime(10_000);
    control.pause();
    control.releaseClock("waiting");
    vi.advanceTimersByTime(10_000);
    expect(control.signal.aborted).toBe(false);
    control.resume();
    vi.advanceTimersByTime(499);
    expect(control.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(runReasonOf(control.signal)).toBe("timeout");
  });

  it("a stopped run's clock does not start again on resume", () => {
    const control = new RunControl({ timeoutMilliseconds: 1_000 });
    control.holdClock("waiting");
    control.stop("user_stop");
    control.releaseClock("waiting");
    vi.advanceTimersByTime(5_000);
    expect(runReasonOf(control.signal)).toBe("user_stop");
  });
});
