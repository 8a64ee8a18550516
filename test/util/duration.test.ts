import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/util/duration.js";

describe("durations", () => {
  it("parses single units, combinations and milliseconds", () => {
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("1h 15m")).toBe(4_500_000);
    expect(parseDuration("2d3h")).toBe(183_600_000);
    expect(parseDuration("1500")).toBe(1_500);
    expect(parseDuration(42)).toBe(42);
  });

  it("refuses what is not a duration", () => {
    for (const text of ["", "m", "5 minutes", "1m30", "-5s", "5x", "s30"])
      expect(parseDuration(text)).toBeUndefined();
  });

  it("reads back every duration it formats", () => {
    for (const milliseconds of [500, 1_000, 90_000, 3_600_000, 5_430_000, 86_400_000 + 61_000]) {
      expect(parseDuration(formatDuration(milliseconds))).toBe(milliseconds);
    }
  });
});
