import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { QUICK_BENCH_SHARES, allBenches, benchesOfShare } from "../support/quick-bench-shares.js";

/**
 * The quick benches run in shares, one test file each (quick-benches-<n>.test.ts): together the
 * shares must be every bench in scripts/bench/, each once, and every share must have its file, so a
 * bench added tomorrow (or a share added to QUICK_BENCH_SHARES) cannot go unrun.
 */
describe("the quick benches' shares", () => {
  const shares = Array.from({ length: QUICK_BENCH_SHARES }, (_, index) => benchesOfShare(index + 1));

  it("finds the benches by listing their folder", () => {
    expect(allBenches().length).toBeGreaterThan(10);
  });

  it("cover every bench exactly once", () => {
    const dealt = shares.flat();
    expect([...dealt].sort()).toEqual(allBenches());
    expect(new Set(dealt).size).toBe(dealt.length);
  });

  it("each have their test file, and no other share file exists", () => {
    const files = readdirSync(import.meta.dirname).filter((file) =>
      /^quick-benches-\d+\.test\.ts$/.test(file),
    );
    const expected = shares.map((_, index) => `quick-benches-${index + 1}.test.ts`);
    expect(files.sort()).toEqual(expected.sort());
    // Each file runs its own share, not a copy of another's.
    expected.forEach((file, index) => {
      const text = readFileSync(path.join(import.meta.dirname, file), "utf8");
      expect(text).toContain(`describeQuickBenchShare(${index + 1});`);
    });
  });
});
