import { describe, expect, it } from "vitest";
import { PooledRandomIds } from "../../src/telemetry/span-ids.js";

describe("trace and span ids", () => {
  it("are lowercase hex of the W3C lengths, and do not repeat across pool refills", () => {
    const ids = new PooledRandomIds();
    const spanIds = new Set<string>();
    const traceIds = new Set<string>();
    // More than one pool's worth of each, interleaved as spans and runs draw them.
    for (let index = 0; index < 1_000; index += 1) {
      const spanId = ids.generateSpanId();
      expect(spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(spanId).not.toBe("0".repeat(16));
      spanIds.add(spanId);
      if (index % 4 === 0) {
        const traceId = ids.generateTraceId();
        expect(traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(traceId).not.toBe("0".repeat(32));
        traceIds.add(traceId);
      }
    }
    expect(spanIds.size).toBe(1_000);
    expect(traceIds.size).toBe(250);
  });
});
