import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Most of the suite's time is spent waiting on real daemons, CLI children, servers and timers,
    // not on the CPU; vitest's default (one worker per core, less one: a single worker on 2 cores)
    // runs those waits one after another. One test file per core (at least two) overlaps them.
    maxWorkers: Math.max(2, availableParallelism()),
    reporters: ["default"],
  },
});
