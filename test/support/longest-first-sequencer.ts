import { readFileSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Where the table of how long each test file took lives (`scripts/test-durations.mjs` rewrites it). */
export const FILE_DURATIONS = path.resolve(import.meta.dirname, "../file-durations.json");

/** A file the table lacks counts as longer than any: it starts first. */
const UNKNOWN = 1e9;

/** The table's shape: seconds per test file, by its path from the repository's root. */
interface FileDurations {
  seconds: Record<string, number>;
}

/**
 * Starts the longest test files first, from a committed table of how long each took, so the run
 * does not end on one long file while the other workers sit idle. vitest's own order needs its
 * cache of the last run's durations, which a clean clone (CI) lacks: it then starts the largest
 * files first, and a 2 kB file that runs for two minutes (the quick benches) came last. A file the
 * table does not know yet (a new one) goes first, as vitest does with files it has not timed.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = readDurations();
    const root = this.ctx.config.root;
    const durationOf = (file: TestSpecification) =>
      seconds[path.relative(root, file.moduleId).split(path.sep).join("/")] ?? UNKNOWN;
    return [...files].sort((a, b) => durationOf(b) - durationOf(a));
  }
}

function readDurations(): Record<string, number> {
  try {
    return (JSON.parse(readFileSync(FILE_DURATIONS, "utf8")) as FileDurations).seconds;
  } catch {
    return {};
  }
}
