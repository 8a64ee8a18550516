import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RunControl } from "../../../src/run-vocabulary/run-control.js";
import { ManualClock } from "../../support/manual-clock.js";
import { cliHarness, isRunning, processState } from "./cli-test-kit.js";
import { waitFor } from "../../support/wait-for.js";

function alive(pids: number[]): number[] {
  return pids.filter(isRunning);
}

/**
 * The pids still alive once the tree had a moment to be reaped: a process killed as the run ends
 * is gone a few milliseconds later (its namespace's init reaps it), and on a loaded machine that
 * moment can come after the outcome. One that lives on is still reported.
 */
async function aliveAfterReaping(pids: number[]): Promise<number[]> {
  await waitFor(
    () => (alive(pids).length === 0 ? true : undefined),
    "the killed tree to be reaped",
    5_000,
  ).catch(() => undefined);
  return alive(pids);
}

describe("the CLI child's lifetime", () => {
  it("kills a child that never prints anything once its idle timeout passes, and falls back", async () => {
    const harness = cliHarness({ scenario: "hang" });
    const outcome = await harness.run({ tool: "claude", idle_timeout: "3s" });

    expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_HUNG");
    expect(harness.eventsOf("fallback")[0]?.data).toMatchObject({ reason: "hung" });
    expect(outcome.worker).toBe("cli:claude→llm");
    expect(alive(await harness.waitForPids(1))).toEqual([]);
  });

  it("kills a child that hangs after some output and hands that output to the fallback", async () => {
    const harness = cliHarness({ scenario: "hang_after_output" });
    await harness.run({ tool: "claude", idle_timeout: "3s" });

    expect(harness.eventsOf("thought")[0]?.data.text).toBe("Thinking about the task.");
    expect(harness.eventsOf("error")[0]?.data.code).toBe("CLI_HUNG");
    expect(harness.llm.calls[0]?.note).toContain("Thinking about the task.");
    expect(alive(await harness.waitForPids(1))).toEqual([]);
  });

  it("ends the whole process tree on stop, including a grandchild that left the group and ignores SIGTERM", async () => {
    const harness = cliHarness({ scenario: "descendants" });
    const control = new RunControl();
    const running = harness.run({ tool: "claude" }, { control });
    const pids = await harness.waitForPids(3);
    await harness.log.waitFor((event) => event.type === "action", 15_000);
    expect(alive(pids)).toEqual(pids);

    control.stop("user_stop", "stopped by the test");
    const outcome = await running;

    expect(outcome).toMatchObject({ status: "stopped", reason: "user_stop", worker: "cli:claude" });
    expect(await aliveAfterReaping(pids)).toEqual([]);
    expect(harness.eventsOf("fallback")).toEqual([]);
  });

  it("ends the tree with daemon_shutdown when the daemon's signal aborts", async () => {
    const harness = cliHarness({ scenario: "descendants" });
    const shutdown = new AbortController();
    const control = new RunControl({ parent: shutdown.signal });
    const running = harness.run({ tool: "codex" }, { control });
    const pids = await harness.waitForPids(3);

    shutdown.abort();
    const outcome = await running;

    expect(outcome).toMatchObject({ status: "stopped", reason: "daemon_shutdown" });
    expect(await aliveAfterReaping(pids)).toEqual([]);
  });

  it("fails with timeout (no fallback) when the run's timeout passes, leaving no process behind", async () => {
    const harness = cliHarness({ scenario: "descendants" });
    // The run's time passes on a clock moved by hand, once the whole tree is up: however long the
    // sandbox takes to start it on a loaded machine, none of that is the run's time.
    const clock = new ManualClock(0);
    const control = new RunControl({ timeoutMilliseconds: 4_000, clock });
    const running = harness.run({ tool: "gemini" }, { control, timeout: 4_000 });
    const pids = await harness.waitForPids(3);
    clock.advanceBy(4_000);
    const outcome = await running;

    expect(outcome).toMatchObject({ status: "failed", reason: "timeout", worker: "cli:gemini" });
    expect(await aliveAfterReaping(pids)).toEqual([]);
    expect(harness.eventsOf("fallback")).toEqual([]);
  });

  it("reports the run's timeout as CLI_TIMEOUT and kills the tree", async () => {
    const harness = cliHarness({ scenario: "hang" });
    const clock = new ManualClock(0);
    const control = new RunControl({ timeoutMilliseconds: 3_000, clock });
    const running = harness.run({ tool: "claude" }, { control, timeout: 3_000 });
    const pids = await harness.waitForPids(1);
    clock.advanceBy(3_000);
    const outcome = await running;

    expect(outcome).toMatchObject({ status: "failed", reason: "timeout", error: { code: "CLI_TIMEOUT" } });
    expect(await aliveAfterReaping(pids)).toEqual([]);
  });

  it("ends what a finished child left running, even a grandchild holding its stdout", async () => {
    const harness = cliHarness({ scenario: "descendants_exit" });
    const outcome = await harness.run({ tool: "claude" });

    expect(outcome).toMatchObject({ status: "completed", result: "Done: Write the notes for today" });
    expect(alive(await harness.waitForPids(3))).toEqual([]);
  });

  it("stops the tree while paused without counting the pause as idle or run time, and continues on resume", async () => {
    const harness = cliHarness({ scenario: "success", waitForGo: true });
    // The run's timeout is working time: a pause longer than what is left must not end the child.
    const clock = new ManualClock(0);
    const control = new RunControl({ timeoutMilliseconds: 8_000, clock });
    const running = harness.run({ tool: "claude", idle_timeout: "2s" }, { control });
    await harness.log.waitFor((event) => event.type === "observation", 15_000);
    const [pid] = await harness.waitForPids(1);
    if (pid === undefined) throw new Error("no pid recorded");

    control.pause();
    await waitFor(() => processState(pid) === "T", "the child is stopped");
    // Paused past the run's time left and the idle timeout, both on the run's clock: the child
    // stays stopped, alive.
    clock.advanceBy(60_000);
    expect(processState(pid)).toBe("T");
    expect(control.signal.aborted).toBe(false);
    writeFileSync(harness.goFile, "go");
    control.resume();
    const outcome = await running;

    expect(outcome).toMatchObject({ status: "completed", worker: "cli:claude" });
    expect(harness.eventsOf("error")).toEqual([]);
  });
});
