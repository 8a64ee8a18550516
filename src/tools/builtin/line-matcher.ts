import { RegexWorker, type RegexWorkerOptions } from "./regex-worker.js";

/** Tells which lines of a batch match a search pattern. */
export interface LineMatcher {
  /** The indexes of the lines that match, ascending. */
  matching(lines: string[]): Promise<number[]>;
  /** Frees what the matcher holds (its worker thread). */
  close(): Promise<void>;
}

/**
 * A regular expression matched off the event loop when the pattern compiles as one, else a
 * plain-text match (linear, so it runs in place).
 */
export function createLineMatcher(pattern: string, options: RegexWorkerOptions): LineMatcher {
  if (compiles(pattern)) return new RegexWorker(pattern, options);
  return {
    matching: async (lines) => lines.flatMap((line, index) => (line.includes(pattern) ? [index] : [])),
    close: async () => undefined,
  };
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
