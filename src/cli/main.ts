import path from "node:path";
import { registerCommands, requestedCommand } from "./commands/index.js";
import { loadWithCodeCache } from "./code-cache.js";

// The CLI's entry point. `npm run build` bundles the CLI (scripts/bundle-cli.mjs): `agentd run` into
// one CommonJS file run with V8's code cache, every other command into ES module chunks. Source
// maps let stack traces name src/ files, but reading them costs every module loaded after they are
// on: the daemon, whose logs outlive it, has them on; the other commands when Node is started with
// --enable-source-maps (e.g. NODE_OPTIONS=--enable-source-maps agentd validate).
const command = requestedCommand(process.argv.slice(2));
if (command === "start") process.setSourceMapsEnabled(true);
if (command === "run") {
  const bundled = loadWithCodeCache(path.join(import.meta.dirname, "run-command.cjs"));
  await (isRunEntry(bundled) ? bundled : await import("./run-entry.js")).main();
} else {
  const { runProgram } = await import("./program.js");
  await runProgram((program) => registerCommands(program, process.argv));
}

function isRunEntry(value: unknown): value is { main: () => Promise<void> } {
  return typeof (value as { main?: unknown } | undefined)?.main === "function";
}
