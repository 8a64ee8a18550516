import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock/clock.js";
import { type DueFire, FireTimer } from "../../src/scheduler/fire-timer.js";
import { SettableWallClock } from "../support/settable-wall-clock.js";

const HOUR = 3_600_000;

/** A fire timer whose handler records each fire and, as the scheduler does, sets no next one. */
function firingOnce(clock: Clock, fired: DueFire[]): FireTimer {
  const timer: FireTimer = new FireTimer(clock, (fires) => {
    fired.push(...fires);
    for (const fire of fires) timer.delete(fire.agentId);
  });
  return timer;
}

describe("FireTimer", () => {
  it("fires within a minute of the wall clock being set past a fire armed hours ahead", () => {
    const clock = new SettableWallClock(Date.parse("2026-11-30T08:00:00Z"));
    const fired: DueFire[] = [];
    const timer = firingOnce(clock, fired);
    const at = clock.now() + 6 * HOUR;
    timer.set("nightly", at);

    clock.setForward(6 * HOUR);
    clock.elapsedClock.advanceBy(60_000);

    expect(fired).toEqual([{ agentId: "nightly", at }]);
    timer.stop();
  });

  it("fires on time, once, when the clock is left alone", () => {
    const clock = new SettableWallClock(Date.parse("2026-11-30T08:00:00Z"));
    const fired: DueFire[] = [];
    const timer = firingOnce(clock, fired);
    const at = clock.now() + 3 * HOUR;
    timer.set("nightly", at);

    clock.elapsedClock.advanceBy(3 * HOUR - 1);
    expect(fired).toEqual([]);
    clock.elapsedClock.advanceBy(1);
    expect(fired).toEqual([{ agentId: "nightly", at }]);
    timer.stop();
    expect(clock.elapsedClock.pending).toBe(0);
  });
});
