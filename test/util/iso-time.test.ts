import { describe, expect, it } from "vitest";
import { isoTextTime, isoTime } from "../../src/util/iso-time.js";

describe("isoTime", () => {
  it("writes what toISOString writes, within a minute, across minutes and going back", () => {
    const start = Date.UTC(2026, 11, 31, 23, 58, 59, 990);
    // Forward a millisecond at a time over midnight and the new year, then jumps back and forth.
    const times = [
      ...Array.from({ length: 130_000 }, (_, step) => start + step),
      start - 86_400_000,
      start + 7,
      0,
      59_999,
      60_000,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (const time of times) {
      const date = new Date(time);
      if (isoTime(date) !== date.toISOString()) expect(isoTime(date)).toBe(date.toISOString());
    }
  });

  it("writes years outside 0–9999 as toISOString does, and refuses an invalid date alike", () => {
    for (const time of [-1, -62_198_755_200_001, 253_402_300_800_000, 8.64e15]) {
      const date = new Date(time);
      expect(isoTime(date)).toBe(date.toISOString());
    }
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });

  it("reads a time back as Date.parse does, the last one made and any other", () => {
    const made = isoTime(new Date(Date.UTC(2026, 11, 1, 2, 14, 5, 67)));
    expect(isoTextTime(made)).toBe(Date.UTC(2026, 11, 1, 2, 14, 5, 67));
    // The same text made again (not the same string), an older one, a time far off, and no time.
    expect(isoTextTime(`${made.slice(0, 10)}${made.slice(10)}`)).toBe(Date.UTC(2026, 11, 1, 2, 14, 5, 67));
    expect(isoTextTime("2026-12-01T02:14:05.066Z")).toBe(Date.UTC(2026, 11, 1, 2, 14, 5, 66));
    expect(isoTextTime("+012026-01-01T00:00:00.000Z")).toBe(Date.parse("+012026-01-01T00:00:00.000Z"));
    expect(isoTextTime("not a time")).toBeNaN();
    expect(isoTime(new Date(253_402_300_800_000))).toBe("+010000-01-01T00:00:00.000Z");
    expect(isoTextTime(made)).toBe(Date.UTC(2026, 11, 1, 2, 14, 5, 67));
  });
});
