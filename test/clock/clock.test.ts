import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MILLISECONDS, dateSource, systemClock } from "../../src/clock/clock.js";
import { ManualClock } from "../support/manual-clock.js";

describe("systemClock", () => {
  // Node's own timers, faked: a wait of 30 days is the point here.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
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

  it("fires a delay after its duration when the wall clock is stepped back meanwhile", () => {
    let fired = 0;
    systemClock.setTimer(() => fired++, 1_000);
    // NTP or an operator sets the time an hour back: a lease renewal or a long poll due in a
    // second must not wait an hour more.
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(1_000);
    expect(fired).toBe(1);
  });

  it("does not fire a delay early when the wall clock is stepped forward meanwhile", () => {
    let fired = 0;
    systemClock.setTimer(() => fired++, 60_000);
    vi.setSystemTime(Date.now() + 3_600_000);
    vi.advanceTimersByTime(1_000);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(59_000);
    expect(fired).toBe(1);
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
