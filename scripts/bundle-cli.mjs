// Part of `npm run build`, after tsc: bundles the CLI, so a command loads a few files instead of
// hundreds of modules (module loading was most of `agentd run`'s start-up).
// - dist/cli/main.js and its chunks in dist/chunks/: every command's module a chunk of its own,
//   imported only when that command runs.
// - dist/cli/run-command.cjs: `agentd run` alone in one CommonJS file, which main.js runs with V8's
//   code cache (src/cli/code-cache.ts): no module of it is compiled again on the next run.
// tsc's per-file output stays in dist/ for tests and benchmarks that import a module. The bundles
// sit two folders below the root, as tsc's modules do, so paths a module resolves from its own
// location (package.json, dist/dashboard/web) are the same from either.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

/**
 * Packages bundled with the CLI: the ones `agentd run` loads before its first model request, pure
 * JavaScript that reads no file beside its own modules. Every other package is imported from
 * node_modules as before (pino's transports start workers from their files, pg and the keychain
 * have native or optional parts, the daemon's server and MCP SDK are left as they are).
 */
const BUNDLED_PACKAGES = new Set([
  "commander",
  "fastest-levenshtein",
  "openai",
  "picomatch",
  "pidtree",
  "yaml",
  "zod",
]);

// Chunk names carry a hash of their content: the last build's would pile up. The code cache
// belongs to the last build's bundle.
rmSync(path.join(root, "dist", "chunks"), { recursive: true, force: true });
rmSync(path.join(root, "dist", "cli", "run-command.cjs.cache"), { force: true });

const plugins = [
  {
    // `z.locales` holds zod's messages in some sixty languages: agentd uses only English, which
    // zod imports on its own. The rest was half of zod's code to compile.
    name: "zod-english-only",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
        contents: 'export { default as en } from "./en.js";',
        resolveDir: path.join(root, "node_modules", "zod", "v4", "locales"),
      }));
    },
  },
  {
    name: "bundle-only-listed-packages",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, ({ path: specifier }) => {
        const name = specifier.startsWith("@") ? specifier.split("/", 2).join("/") : specifier.split("/")[0];
        return BUNDLED_PACKAGES.has(name) ? undefined : { path: specifier, external: true };
      });
    },
  },
];

await build({
  absWorkingDir: root,
  entryPoints: { "cli/main": "src/cli/main.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  sourcemap: true,
  // Stack traces need the src/ file and line, not its text: smaller maps load faster.
  sourcesContent: false,
  // Bundled CommonJS packages call require(): an ES module has none of its own.
  banner: {
    js: 'import { createRequire as createRequireOfBundle } from "node:module"; const require = createRequireOfBundle(import.meta.url);',
  },
  logLevel: "warning",
  plugins,
});

await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/run-entry.ts"],
  outfile: "dist/cli/run-command.cjs",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.19",
  // What a module reads from import.meta, in CommonJS terms.
  define: { "import.meta.dirname": "__dirname", "import.meta.url": "importMetaUrlOfBundle" },
  // import() of a package left in node_modules becomes require() (Node ≥ 20.19 requires ES modules
  // too): code-cache.ts compiles the file as a script, whose import() Node 20 refuses.
  supported: { "dynamic-import": false },
  banner: { js: 'const importMetaUrlOfBundle = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
  plugins,
});
