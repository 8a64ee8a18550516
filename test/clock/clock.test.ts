import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MILLISECONDS, dateSource, systemClock } from "../../src/clock/clock.js";
import { ManualClock } from "../support/manual-clock.js";

describe("systemClock", () => {
  // Node's own timers, faked: a wait of 30 days is the point here.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires a delay longer than a Node timer holds at its time, not early", () => {
    const fired: number[] = [];
    const start = Date.now();
    systemClock.setTimer(() => fired.push(Date.now() - start), MAX_TIMER_DELAY_MILLISECONDS + 5_000);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MILLISECONDS);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(5_000);
    expect(fired).toEqual([MAX_TIMER_DELAY_MILLISECONDS + 5_000]);
  });

  it("never fires a cancelled timer, nor one at once", () => {
    let fired = 0;
    const cancel = systemClock.setTimer(() => fired++, 1_000);
    systemClock.setTimer(() => fired++, 0);
    expect(fired).toBe(0);
    cancel();
    vi.advanceTimersByTime(2_000);
    expect(fired).toBe(1);
  });
});

describe("dateSource", () => {
  it("stamps with the clock's time", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const now = dateSource(clock);
    clock.advanceBy(1_500);
    expect(now().toISOString()).toBe("2026-01-01T00:00:01.500Z");
  });
});
