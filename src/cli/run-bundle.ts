import path from "node:path";
import { loadWithCodeCache } from "./code-cache.js";

export interface RunEntry {
  main: () => Promise<void>;
}

/**
 * `agentd run`'s bundle, dist/cli/run-command.cjs (scripts/bundle-cli.mjs), run with V8's code
 * cache (code-cache.ts); undefined when only tsc's output is built (run-entry.ts is then imported).
 */
export function loadRunBundle(): RunEntry | undefined {
  const bundled = loadWithCodeCache(path.join(import.meta.dirname, "run-command.cjs"));
  return isRunEntry(bundled) ? bundled : undefined;
}

function isRunEntry(value: unknown): value is RunEntry {
  return typeof (value as { main?: unknown } | undefined)?.main === "function";
}
