import { loadCommandBundle } from "./command-bundle.js";
import { requestedCommand } from "./requested-command.js";

// The CLI's ES module entry point (`node dist/cli/main.js`); the bin gets to the same bundles
// without it (launch.ts). `npm run build` bundles the CLI (scripts/bundle-cli.mjs): `agentd run`
// into one CommonJS file, every other command into another, both run with V8's code cache. When
// only tsc's output is built, the entry modules are imported instead. Source maps let stack traces
// name src/ files, but reading them costs every module loaded after they are on: the daemon, whose
// logs outlive it, has them on (source-mapped-stacks.ts); the other commands when Node is started
// with --enable-source-maps (e.g. NODE_OPTIONS=--enable-source-maps agentd validate).
const command = requestedCommand(process.argv.slice(2));
const entry =
  loadCommandBundle(command) ??
  (command === "run" ? await import("./run-entry.js") : await import("./main-entry.js"));
await entry.main();
