import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadCommandBundle } from "./command-bundle.js";
import { requestedCommand } from "./requested-command.js";

/**
 * What the `agentd` bin runs first (bin/agentd.js, CommonJS, requires this module's bundle
 * dist/cli/launch.cjs). Every command goes straight to its CommonJS bundle (`agentd run` to its
 * own, the rest to main-command.cjs), run with V8's code cache: no ES module is loaded, so Node's
 * ES module loader never starts (it, and the imports of hundreds of modules, cost a start tenths of
 * a CPU-second). When only tsc's output is built, main.js answers.
 */
export async function launch(): Promise<void> {
  const bundle = loadCommandBundle(requestedCommand(process.argv.slice(2)));
  if (bundle) await bundle.main();
  else await import(pathToFileURL(path.join(import.meta.dirname, "main.js")).href);
}
