#!/usr/bin/env node
// CommonJS (bin/package.json): `agentd run` reaches its first model request without Node's ES
// module loader starting (src/cli/launch.ts); every other command imports dist/cli/main.js.
require("../dist/cli/launch.cjs").launch();
