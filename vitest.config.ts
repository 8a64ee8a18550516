import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/longest-first-sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A guard against a hung test, not a time a test must meet: a black-box case that starts two
    // daemons takes 10 s on a quiet machine and three times that at load 15, which CI reaches.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A worker keeps the modules it imported for the next file instead of importing src/ and its
    // dependencies again for each of the 120 files: on 2 cores that import was a third of the
    // suite's CPU time (vitest's "import" total fell from 102 s to 18 s, the whole run from 445 s to
    // 317 s at load 10). Test files still run in their own module scope; what they share is src/'s
    // modules and test/support, so a test that changes process-wide state (process.env, fake
    // timers) puts it back when it ends.
    isolate: false,
    // Most of the suite's time is spent waiting on real daemons, CLI children, servers and timers,
    // not on the CPU; vitest's default (one worker per core, less one: a single worker on 2 cores)
    // runs those waits one after another. One test file per core, and one more, overlaps them.
    maxWorkers: availableParallelism() + 1,
    // The longest files first (from test/file-durations.json), so no worker is left running one long
    // file at the end while the others idle: on a clean clone vitest would order by file size.
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ["default"],
  },
});
