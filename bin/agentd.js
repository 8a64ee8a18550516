#!/usr/bin/env node
// CommonJS (bin/package.json): `agentd run` reaches its first model request without Node's ES
// module loader starting (src/cli/launch.ts); every other command imports dist/cli/main.js, as
// does everything when only the TypeScript compiler's output is built (no dist/cli/launch.cjs).
const launcher = require("node:path").join(__dirname, "..", "dist", "cli", "launch.cjs");
let launch;
try {
  ({ launch } = require(launcher));
} catch (error) {
  if (error?.code !== "MODULE_NOT_FOUND" || !error.message.includes(launcher)) throw error;
}
if (launch) launch();
else import("../dist/cli/main.js");
