import { requestedCommand } from "./commands/index.js";

// The CLI's entry point. `npm run build` bundles the CLI (scripts/bundle-cli.mjs); its source maps
// let stack traces name src/ files, but reading them costs every module loaded after they are on
// (tens of milliseconds: a quarter of `agentd run`'s budget to its first model request). The daemon,
// whose logs outlive it, has them on; the other commands when Node is started with
// --enable-source-maps (e.g. NODE_OPTIONS=--enable-source-maps agentd run …).
if (requestedCommand(process.argv.slice(2)) === "start") process.setSourceMapsEnabled(true);
await import("./program.js");
