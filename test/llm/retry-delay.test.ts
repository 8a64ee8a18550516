import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelay } from "../../src/llm/retry-delay.js";

describe("retry-after and back-off", () => {
  it("reads retry-after as seconds, as an HTTP date, and retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter(new Headers({ "retry-after": "3" }), now)).toBe(3_000);
    expect(parseRetryAfter(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(
      10_000,
    );
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250" }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it("grows exponentially with jitter and stays under the cap, retry-after included", () => {
    const settings = { baseDelayMilliseconds: 100, maxDelayMilliseconds: 1_000 };
    expect(retryDelay(1, settings, undefined, () => 0)).toBe(50);
    expect(retryDelay(1, settings, undefined, () => 1)).toBe(100);
    expect(retryDelay(3, settings, undefined, () => 1)).toBe(400);
    expect(retryDelay(10, settings, undefined, () => 1)).toBe(1_000);
    expect(retryDelay(1, settings, 600_000)).toBe(1_000);
    expect(retryDelay(1, settings, 300)).toBe(300);
  });
});
