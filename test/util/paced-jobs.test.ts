import { describe, expect, it } from "vitest";
import { PacedJobs } from "../../src/util/paced-jobs.js";

const nextTick = () => new Promise((resolve) => setImmediate(resolve));

describe("paced jobs", () => {
  it("runs a turn's count of jobs at once with runSoon, the rest in later ticks in order", async () => {
    const jobs = new PacedJobs(2);
    const ran: number[] = [];
    for (const job of [1, 2, 3, 4, 5]) jobs.runSoon(() => ran.push(job));
    expect(ran).toEqual([1, 2]);
    await nextTick();
    expect(ran).toEqual([1, 2, 3, 4]);
    await nextTick();
    expect(ran).toEqual([1, 2, 3, 4, 5]);
  });

  it("runs at once again in a turn said to be new, never ahead of jobs still waiting", async () => {
    const jobs = new PacedJobs(1);
    const ran: string[] = [];
    jobs.runSoon(() => ran.push("first"));
    jobs.runSoon(() => ran.push("waits"));
    jobs.newTurn();
    jobs.runSoon(() => ran.push("behind the waiting one"));
    expect(ran).toEqual(["first"]);
    await nextTick();
    await nextTick();
    expect(ran).toEqual(["first", "waits", "behind the waiting one"]);
    jobs.newTurn();
    jobs.runSoon(() => ran.push("now"));
    expect(ran.at(-1)).toBe("now");
  });
});
