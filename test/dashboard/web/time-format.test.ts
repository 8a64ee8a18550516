import { describe, expect, it } from "vitest";
import { summarizeActivity } from "../../../src/dashboard/web/activity.js";
import type { RunRecord } from "../../../src/dashboard/web/api-types.js";
import { parseRoute, routeHref } from "../../../src/dashboard/web/route.js";
import { formatCost, formatDuration, relativeTime } from "../../../src/dashboard/web/time-format.js";

const now = new Date("2026-03-10T12:30:00.000Z");

describe("how the page writes times, costs and places", () => {
  it("writes times relative to now, in the past and the future", () => {
    expect(relativeTime(new Date(now.getTime() - 2_000), now)).toBe("now");
    expect(relativeTime(new Date(now.getTime() - 5 * 60_000), now)).toBe("5 min. ago");
    expect(relativeTime(new Date(now.getTime() + 2 * 3_600_000), now)).toBe("in 2 hr.");
    expect(relativeTime(new Date(now.getTime() - 3 * 86_400_000), now)).toBe("3 days ago");
  });

  it("writes durations and costs at a readable precision", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_345)).toBe("12.3 s");
    expect(formatDuration(245_000)).toBe("4 min 05 s");
    expect(formatDuration(7_380_000)).toBe("2 h 03 min");
    expect(formatCost(0)).toBe("$0");
    expect(formatCost(0.01234)).toBe("$0.0123");
    expect(formatCost(1.5)).toBe("$1.50");
  });

  it("reads and writes the places of the page in the URL hash", () => {
    expect(parseRoute("#/agents/code%2Freview")).toEqual({ view: "agent", agent: "code/review" });
    expect(parseRoute("#/runs/r_1")).toEqual({ view: "run", run: "r_1" });
    expect(parseRoute("#/approvals")).toEqual({ view: "approvals" });
    expect(parseRoute("")).toEqual({ view: "agents" });
    expect(parseRoute("#/nowhere")).toEqual({ view: "agents" });
    expect(routeHref({ view: "agent", agent: "a b" })).toBe("#/agents/a%20b");
  });

  it("sums the last 24 hours by status, hour and agent", () => {
    const run = (agent: string, status: RunRecord["status"], hoursAgo: number, cost: number): RunRecord => ({
      id: `r_${agent}_${hoursAgo}`,
      agent,
      task: "t",
      status,
      trigger: { kind: "api" },
      definition_hash: "h",
      created_at: new Date(now.getTime() - hoursAgo * 3_600_000).toISOString(),
      usage: { prompt_tokens: 60, completion_tokens: 40, total_tokens: 100 },
      cost_usd: cost,
    });
    const summary = summarizeActivity(
      [run("a", "completed", 0, 0.5), run("a", "failed", 1, 0.25), run("b", "completed", 23, 1)],
      now,
    );
    expect(summary).toMatchObject({
      total: 3,
      tokens: 300,
      cost: 1.75,
      byStatus: { completed: 2, failed: 1 },
    });
    expect(summary.hours).toHaveLength(24);
    expect(summary.hours[23]).toMatchObject({ runs: 1, failed: 0, cost: 0.5 });
    expect(summary.hours[22]).toMatchObject({ runs: 1, failed: 1 });
    expect(summary.hours[0]).toMatchObject({ runs: 1, cost: 1 });
    expect(summary.agents.map((agent) => agent.agent)).toEqual(["b", "a"]);
  });
});
