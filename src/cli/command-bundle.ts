import path from "node:path";
import { loadWithCodeCache } from "./code-cache.js";
import { mapStackTracesOf } from "./source-mapped-stacks.js";

/** What a command bundle (and the module it is built from) exports: the CLI, run on process.argv. */
export interface CommandEntry {
  main: () => Promise<void>;
}

/**
 * The bundle that answers a command line (scripts/bundle-cli.mjs), run with V8's code cache
 * (code-cache.ts): dist/cli/run-command.cjs for `agentd run`, dist/cli/main-command.cjs for every
 * other command. Undefined when only tsc's output is built: the caller then imports run-entry.ts
 * or main-entry.ts.
 */
export function loadCommandBundle(command: string | undefined): CommandEntry | undefined {
  const bundle = path.join(import.meta.dirname, command === "run" ? "run-command.cjs" : "main-command.cjs");
  // The daemon runs far more of the bundle than a short command: its compiled code is its own.
  const bundled = loadWithCodeCache(
    bundle,
    command === "start" ? `${bundle}.start.cache` : `${bundle}.cache`,
  );
  if (!isCommandEntry(bundled)) return undefined;
  // The daemon's logs outlive it: its stack traces name src/ files, as those of a command started
  // with --enable-source-maps (e.g. NODE_OPTIONS=--enable-source-maps agentd validate) do.
  if (command === "start" || process.sourceMapsEnabled) mapStackTracesOf(bundle);
  return bundled;
}

function isCommandEntry(value: unknown): value is CommandEntry {
  return typeof (value as { main?: unknown } | undefined)?.main === "function";
}
