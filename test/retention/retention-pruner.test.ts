import { describe, expect, it } from "vitest";
import pino from "pino";
import { DEFAULT_RETENTION, isPastRetention } from "../../src/config/retention-policy.js";
import { RetentionPruner } from "../../src/retention/retention-pruner.js";
import { SettableWallClock } from "../support/settable-wall-clock.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("RetentionPruner", () => {
  it("does not prune what the policy keeps when the wall clock is set far forward: it counts the time that passed", async () => {
    const start = Date.parse("2026-06-01T00:00:00.000Z");
    const clock = new SettableWallClock(start);
    // Runs created 10 days and 100 days before the start: days 90 keeps the first.
    const runs = [
      { id: "recent", created_at: new Date(start - 10 * DAY).toISOString() },
      { id: "old", created_at: new Date(start - 100 * DAY).toISOString() },
    ];
    const kept = new Set(runs.map((run) => run.id));
    const lines: string[] = [];
    const pruner = new RetentionPruner({
      prune: (policyOf, now) => {
        for (const run of runs) if (isPastRetention(policyOf("keeper"), run, 1, now)) kept.delete(run.id);
        return Promise.resolve({ runs: 0, segments: 0 });
      },
      policyOf: () => DEFAULT_RETENTION,
      clock,
      // Prunes are asked for below: the interval's timer does not fire within the test.
      intervalMilliseconds: 1_000 * DAY,
      logger: pino({ level: "warn" }, { write: (line: string) => void lines.push(line) }),
    });
    await pruner.pruneNow();
    expect([...kept]).toEqual(["recent"]);

    // A wrong NTP server, or an operator's typo, sets the clock a year forward; an hour passes.
    clock.setForward(365 * DAY);
    clock.elapsedClock.advanceBy(HOUR);
    await pruner.pruneNow();
    expect([...kept]).toEqual(["recent"]);
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([expect.stringMatching(/^the clock was set forward by 365 days/)]);

    // Time that really passes still ages runs out: 80 more days.
    clock.elapsedClock.advanceBy(80 * DAY);
    await pruner.pruneNow();
    expect([...kept]).toEqual([]);
    expect(lines).toHaveLength(1);
  });
});
