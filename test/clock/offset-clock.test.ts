import { describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/clock/offset-clock.js";
import { ManualClock } from "../support/manual-clock.js";

const START = Date.parse("2026-03-02T10:00:00.000Z");

describe("OffsetClock", () => {
  it("gives the reference's time, read half-way through each measure", () => {
    const base = new ManualClock(START);
    const clock = new OffsetClock(base);
    expect(clock.now()).toBe(START);
    // The base is 30 s ahead: the reference read 29,990 ms behind a measure that took 20 ms.
    clock.measured(START, START + 20, START + 10 - 30_000);
    expect(clock.offset).toBe(-30_000);
    expect(clock.now()).toBe(START - 30_000);
    base.advanceBy(1_000);
    expect(clock.now()).toBe(START - 29_000);
  });

  it("trusts the measure with the shortest round trip among the latest", () => {
    const base = new ManualClock(START);
    const clock = new OffsetClock(base);
    clock.measured(START, START + 10, START + 5 + 1_000);
    // A slow answer (2 s) says little about when the reference was read.
    clock.measured(START + 100, START + 2_100, START + 100 + 1_600);
    expect(clock.offset).toBe(1_000);
  });

  it("never goes backwards after the first measure, and keeps the base clock's timers", () => {
    const base = new ManualClock(START);
    const clock = new OffsetClock(base);
    clock.measured(START, START, START + 500);
    expect(clock.now()).toBe(START + 500);
    // A later, better measure moves the offset back by 300 ms: the time holds still meanwhile.
    clock.measured(START, START, START + 200);
    expect(clock.now()).toBe(START + 500);
    base.advanceBy(300);
    expect(clock.now()).toBe(START + 500);
    base.advanceBy(1);
    expect(clock.now()).toBe(START + 501);
    let fired = 0;
    clock.setTimer(() => (fired += 1), 1_000);
    base.advanceBy(999);
    expect(fired).toBe(0);
    base.advanceBy(1);
    expect(fired).toBe(1);
  });

  it("ignores a measure whose answer came before it was sent", () => {
    const clock = new OffsetClock(new ManualClock(START));
    clock.measured(START + 10, START, START + 5_000);
    expect(clock.offset).toBe(0);
  });
});
