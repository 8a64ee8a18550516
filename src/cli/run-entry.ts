import { registerRunCommand } from "./commands/run.js";
import { runProgram } from "./program.js";

/**
 * `agentd run` on its own. `npm run build` bundles it, with all it needs, into one CommonJS file,
 * dist/cli/run-command.cjs, that main.ts runs with V8's code cache (code-cache.ts).
 */
export function main(): Promise<void> {
  return runProgram(registerRunCommand);
}
