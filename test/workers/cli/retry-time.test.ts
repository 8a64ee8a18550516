import { describe, expect, it } from "vitest";
import { extractRetryTime } from "../../../src/workers/cli/retry-time.js";

const now = new Date("2026-04-28T12:00:00Z");
const at = (text: string) => extractRetryTime(text, now)?.toISOString();

describe("reading when a quota or rate limit ends", () => {
  it("reads epoch seconds (Claude's `|<epoch>`, Codex's resets_at)", () => {
    expect(at("Claude AI usage limit reached|1777384800")).toBe("2026-04-28T14:00:00.000Z");
    expect(at('{"type":"usage_limit_reached","resets_at":1777392000}')).toBe("2026-04-28T16:00:00.000Z");
  });

  it("reads seconds to wait", () => {
    expect(at('"resets_in_seconds":3600')).toBe("2026-04-28T13:00:00.000Z");
    expect(at("retry-after: 120")).toBe("2026-04-28T12:02:00.000Z");
    expect(at("Please retry in 47.434392449s.")).toBe("2026-04-28T12:00:47.434Z");
  });

  it("reads spelled-out and compact durations", () => {
    expect(at("try again in 2 days 3 hours 5 minutes.")).toBe("2026-04-30T15:05:00.000Z");
    expect(at("Individual quota reached. Resets in 2h39m52s.")).toBe("2026-04-28T14:39:52.000Z");
    expect(at("Rate limit reached. Please try again in 1.5s")).toBe("2026-04-28T12:00:01.500Z");
  });

  it("reads calendar and ISO times", () => {
    const local = extractRetryTime("try again at Apr 29th, 2026 10:03 PM.", now);
    expect(local).toEqual(new Date(2026, 3, 29, 22, 3));
    expect(at("quota resets at 2026-04-28T18:30:00Z")).toBe("2026-04-28T18:30:00.000Z");
  });

  it("reads a clock time as its next occurrence in local time", () => {
    const reset = extractRetryTime("5-hour limit reached ∙ resets 3pm", now);
    expect(reset?.getHours()).toBe(15);
    expect(reset && reset.getTime() > now.getTime()).toBe(true);
    expect(reset && reset.getTime() - now.getTime() <= 86_400_000).toBe(true);
  });

  it("gives nothing for text without a time, or a time in the past or too far ahead", () => {
    expect(at("Invalid API key · Please run /login")).toBeUndefined();
    expect(at("Claude AI usage limit reached|1577836800")).toBeUndefined();
    expect(at("try again in 40 days")).toBeUndefined();
  });
});
