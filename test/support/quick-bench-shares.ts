import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const benchFolder = path.join(root, "scripts/bench");

/**
 * How many test files the quick benches are spread over (`test/bench/quick-benches-<n>.test.ts`,
 * n = 1…QUICK_BENCH_SHARES): one file ran them all one after the other, keeping one worker busy for
 * five minutes while the others had finished; in shares, vitest runs them on several workers.
 */
export const QUICK_BENCH_SHARES = 4;

/**
 * Every bench in scripts/bench/ (each `*.bench.mjs`, found by listing the folder, so a bench added
 * tomorrow is covered without editing a test), sorted by name.
 */
export function allBenches(): string[] {
  return readdirSync(benchFolder)
    .filter((file) => file.endsWith(".bench.mjs"))
    .sort();
}

/**
 * The benches of share `share` (1…QUICK_BENCH_SHARES): every QUICK_BENCH_SHARES-th bench of the
 * sorted list, starting at the `share`-th. Dealt round-robin by name, the few long benches land in
 * different shares (measured: 57–80 s per share on a quiet machine), and the partition depends on
 * the names alone, not on a table that could go stale.
 */
export function benchesOfShare(share: number): string[] {
  return allBenches().filter((_, index) => index % QUICK_BENCH_SHARES === share - 1);
}

async function runQuick(bench: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--expose-gc", path.join(benchFolder, bench), "--quick"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output };
}

/**
 * The tests of one share: each of its benches run in its quick mode (`--quick`: a few iterations)
 * as `npm run bench` runs it, on the built daemon, one after the other: a bench that no longer runs
 * fails here, not months later. Nothing they print is judged but that they follow the contract at
 * the top of docs/benchmarks.md: exit 0 and print at least one ratio and the machine's load. The
 * suite checks behaviour, never a timing.
 */
export function describeQuickBenchShare(share: number): void {
  describe(`benches in their quick mode, share ${share} of ${QUICK_BENCH_SHARES}`, () => {
    const benches = benchesOfShare(share);

    it("has benches to run", () => {
      expect(benches.length).toBeGreaterThan(0);
    });

    for (const bench of benches) {
      // A loaded 2-core machine stretches a quick bench from seconds to minutes: with the shares on
      // three workers beside two CPU burners at load 25, start-history took more than 300 s.
      it(`${bench} runs and prints its ratios and load`, { timeout: 600_000 }, async () => {
        const { code, output } = await runQuick(bench);
        expect(code, output).toBe(0);
        expect(output, output).toMatch(/ratio/i);
        expect(output, output).toMatch(/load/i);
      });
    }
  });
}
