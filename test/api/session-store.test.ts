import { describe, expect, it } from "vitest";
import { SessionStore } from "../../src/api/session-store.js";
import { ManualClock } from "../support/manual-clock.js";

describe("SessionStore", () => {
  it("keeps a session for its lifetime on the clock it is given, then ends it", () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const sessions = new SessionStore({ lifetimeMilliseconds: 60_000, clock });
    const id = sessions.create();
    clock.advanceBy(59_999);
    expect(sessions.isValid(id)).toBe(true);
    clock.advanceBy(1);
    expect(sessions.isValid(id)).toBe(false);
  });

  it("drops the oldest session past its capacity, and one ended by logout", () => {
    const sessions = new SessionStore({ capacity: 2, clock: new ManualClock(0) });
    const [first, second, third] = [sessions.create(), sessions.create(), sessions.create()];
    expect([first, second, third].map((id) => sessions.isValid(id))).toEqual([false, true, true]);
    sessions.end(second);
    expect(sessions.isValid(second)).toBe(false);
  });

  it("tells its listeners when a session expires, at the expiry on its clock", () => {
    const clock = new ManualClock(0);
    const sessions = new SessionStore({ lifetimeMilliseconds: 60_000, clock });
    let ends = 0;
    sessions.onEnd(() => ends++);
    const first = sessions.create();
    clock.advanceBy(30_000);
    const second = sessions.create();
    clock.advanceBy(29_999);
    expect(ends).toBe(0);
    clock.advanceBy(1);
    expect([ends, sessions.isValid(first), sessions.isValid(second)]).toEqual([1, false, true]);
    clock.advanceBy(30_000);
    expect([ends, sessions.isValid(second)]).toEqual([2, false]);
    sessions.close();
    expect(clock.pending).toBe(0);
  });
});
