import { registerCommands } from "./commands/index.js";
import { requestedCommand } from "./requested-command.js";
import { loadRunBundle } from "./run-bundle.js";

// The CLI's entry point (the bin sends `agentd run` to its bundle without it: launch.ts). `npm run
// build` bundles the CLI (scripts/bundle-cli.mjs): `agentd run` into one CommonJS file run with V8's
// code cache, every other command into ES module chunks. Source
// maps let stack traces name src/ files, but reading them costs every module loaded after they are
// on: the daemon, whose logs outlive it, has them on; the other commands when Node is started with
// --enable-source-maps (e.g. NODE_OPTIONS=--enable-source-maps agentd validate).
const command = requestedCommand(process.argv.slice(2));
if (command === "start") process.setSourceMapsEnabled(true);
if (command === "run") {
  await (loadRunBundle() ?? (await import("./run-entry.js"))).main();
} else {
  const { runProgram } = await import("./program.js");
  await runProgram((program) => registerCommands(program, process.argv));
}
