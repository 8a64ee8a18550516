import { describe, expect, it } from "vitest";
import { LaunchWave } from "../../src/runs/launch/launch-wave.js";

describe("LaunchWave", () => {
  it("keeps work until no launch is under way, in order, and runs it at once when none is", () => {
    const wave = new LaunchWave();
    const done: string[] = [];
    wave.afterLaunches(() => done.push("idle"));
    expect(done).toEqual(["idle"]);
    const first = wave.begin();
    const second = wave.begin();
    wave.afterLaunches(() => done.push("a"));
    wave.afterLaunches(() => done.push("b"));
    first();
    // Said twice, a launch still counts once.
    first();
    expect(done).toEqual(["idle"]);
    expect(wave.underway).toBe(1);
    second();
    expect(done).toEqual(["idle", "a", "b"]);
    expect(wave.underway).toBe(0);
  });

  it("lets the work go when launches never pause, and all of it at a flush", async () => {
    const wave = new LaunchWave();
    const never = wave.begin();
    const ran = new Promise<void>((resolve) => wave.afterLaunches(resolve));
    // Bounded by AFTER_LAUNCHES_LONGEST_WAIT_MILLISECONDS however long the launches last.
    await ran;
    let flushed = false;
    wave.afterLaunches(() => (flushed = true));
    wave.flush();
    expect(flushed).toBe(true);
    never();
  });
});
