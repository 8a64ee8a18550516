import { describe, expect, it } from "vitest";
import { IdleWatchdog } from "../../../src/workers/cli/idle-watchdog.js";
import { ManualClock } from "../../support/manual-clock.js";

function watchdog(options: { working?: () => boolean } = {}) {
  const clock = new ManualClock(0);
  let idle = 0;
  const dog = new IdleWatchdog(1_000, () => idle++, options.working, clock);
  return { clock, dog, idle: () => idle };
}

describe("IdleWatchdog on a clock", () => {
  it("fires once when no progress came for the idle period", () => {
    const { clock, dog, idle } = watchdog();
    clock.advanceBy(999);
    expect(idle()).toBe(0);
    clock.advanceBy(1);
    expect(idle()).toBe(1);
    expect(dog.fired).toBe(true);
    clock.advanceBy(10_000);
    expect(idle()).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it("starts the period again with each progress, keeping one timer", () => {
    const { clock, dog, idle } = watchdog();
    for (let step = 0; step < 5; step++) {
      clock.advanceBy(900);
      dog.touch();
    }
    expect(idle()).toBe(0);
    expect(clock.pending).toBe(1);
    clock.advanceBy(999);
    expect(idle()).toBe(0);
    clock.advanceBy(1);
    expect(idle()).toBe(1);
  });

  it("does not count paused time, and gives a full period after resume", () => {
    const { clock, dog, idle } = watchdog();
    clock.advanceBy(900);
    dog.pause();
    clock.advanceBy(60_000);
    expect(idle()).toBe(0);
    dog.resume();
    clock.advanceBy(999);
    expect(idle()).toBe(0);
    clock.advanceBy(1);
    expect(idle()).toBe(1);
  });

  it("counts silence during the CLI's own tool call as work, and nothing once stopped", () => {
    let working = true;
    const { clock, idle } = watchdog({ working: () => working });
    clock.advanceBy(5_000);
    expect(idle()).toBe(0);
    working = false;
    clock.advanceBy(1_000);
    expect(idle()).toBe(1);

    const other = watchdog();
    other.dog.stop();
    other.clock.advanceBy(5_000);
    expect(other.idle()).toBe(0);
    expect(other.clock.pending).toBe(0);
  });
});
