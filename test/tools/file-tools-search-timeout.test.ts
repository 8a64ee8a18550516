import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunAbort, RunControl } from "../../src/run-vocabulary/run-control.js";
import { ToolHarness } from "../support/tool-harness.js";
import { waitFor } from "../support/wait-for.js";

/** Exponential backtracking on a line of words ending in a character `\w` and `\s` both refuse. */
const CATASTROPHIC_PATTERN = "^(\\w+\\s?)+$";
const CATASTROPHIC_LINE = `word word word word ${"a".repeat(40)}!`;

let harness: ToolHarness;

/** Counts event-loop turns while `work` runs: a blocked loop counts none. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 50);
  try {
    return { value: await work, ticks };
  } finally {
    clearInterval(interval);
  }
}

describe("search_files: a catastrophic pattern cannot freeze the daemon", () => {
  afterEach(() => harness.dispose());

  it("gives up with TOOL_TIMEOUT after its deadline, keeping earlier matches, while the loop runs on", async () => {
    harness = new ToolHarness({
      permissions: { allow: ["search_files"] },
      settings: { shell_timeout: 1_500 },
    });
    writeFileSync(path.join(harness.workdir, "a.txt"), "hello world\n");
    writeFileSync(path.join(harness.workdir, "b.txt"), `${CATASTROPHIC_LINE}\n`);
    const started = Date.now();

    const { value: result, ticks } = await ticksDuring(
      harness.call("search_files", { pattern: CATASTROPHIC_PATTERN }),
    );

    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result).toMatchObject({ ok: false, code: "TOOL_TIMEOUT" });
    expect(result.output).toContain("the pattern took too long");
    expect(result.output).toContain("use a simpler pattern or a plain text search");
    expect(result.output).toContain("a.txt:1: hello world");
    expect(ticks).toBeGreaterThan(3);
  });

  it("ends at once when the run is stopped mid-match", async () => {
    harness = new ToolHarness({ permissions: { allow: ["search_files"] } });
    writeFileSync(path.join(harness.workdir, "b.txt"), `${CATASTROPHIC_LINE}\n`);
    const control = new RunControl();
    const started = Date.now();
    const call = harness.call("search_files", { pattern: CATASTROPHIC_PATTERN }, control);
    await waitFor(() => harness.events.some((event) => event.type === "action"), "the action event");
    // Give the worker time to be deep in the backtracking before the stop arrives.
    const stop = setTimeout(() => control.stop("user_stop", "stopped by the test"), 300);

    const { value: outcome, ticks } = await ticksDuring(
      call.then(
        () => "finished",
        (error: unknown) => error,
      ),
    );

    clearTimeout(stop);
    expect(outcome).toBeInstanceOf(RunAbort);
    // Well under the 30 s matching deadline that would otherwise end it.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ticks).toBeGreaterThan(0);
  });

  it("finds the same lines as before with a well-behaved regex, across batches, and with plain text", async () => {
    harness = new ToolHarness({ permissions: { allow: ["search_files"] } });
    const lines = Array.from({ length: 5_000 }, (_, index) =>
      index % 1_000 === 7 ? `needle ${index}` : `hay ${index}`,
    );
    writeFileSync(path.join(harness.workdir, "big.txt"), `${lines.join("\n")}\n`);
    const regex = await harness.call("search_files", { pattern: "^needle \\d+$" });
    expect(regex.output.split("\n")).toEqual(
      [7, 1007, 2007, 3007, 4007].map((index) => `big.txt:${index + 1}: needle ${index}`),
    );
    writeFileSync(path.join(harness.workdir, "call.txt"), "first\nrun(answer\n");
    const plain = await harness.call("search_files", { pattern: "run(answer" });
    expect(plain.output).toBe("call.txt:2: run(answer");
  });
});
