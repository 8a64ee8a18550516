import path from "node:path";
import { pathToFileURL } from "node:url";
import { requestedCommand } from "./requested-command.js";
import { loadRunBundle } from "./run-bundle.js";

/**
 * What the `agentd` bin runs first (bin/agentd.js, CommonJS, requires this module's bundle
 * dist/cli/launch.cjs). `agentd run` goes straight to its own bundle: no ES module is loaded on
 * its way to the first model request, so Node's ES module loader never starts (it, and main.js's
 * imports, cost some milliseconds). Every other command, and `run` when only tsc's output is
 * built, is main.js's.
 */
export async function launch(): Promise<void> {
  const run = requestedCommand(process.argv.slice(2)) === "run" ? loadRunBundle() : undefined;
  if (run) await run.main();
  else await import(pathToFileURL(path.join(import.meta.dirname, "main.js")).href);
}
