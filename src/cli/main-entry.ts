import { registerCommands } from "./commands/index.js";
import { runProgram } from "./program.js";

/**
 * Every command of the CLI (the one the line names is registered, or all of them for help).
 * `npm run build` bundles it, with the packages it needs, into one CommonJS file,
 * dist/cli/main-command.cjs, that launch.ts and main.ts run with V8's code cache (code-cache.ts).
 */
export function main(): Promise<void> {
  return runProgram((program) => registerCommands(program, process.argv));
}
