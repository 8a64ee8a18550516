// Part of `npm run build`, after tsc: bundles the CLI, so a command loads a few files instead of
// hundreds of modules (module loading was most of `agentd run`'s start-up).
// - dist/cli/main.js and its chunks in dist/chunks/: every command's module a chunk of its own,
//   imported only when that command runs.
// - dist/cli/run-command.cjs: `agentd run` alone in one CommonJS file, run with V8's code cache
//   (src/cli/code-cache.ts): no module of it is compiled again on the next run.
// - dist/cli/launch.cjs: what the bin (CommonJS) requires: `agentd run` goes to its bundle without
//   Node's ES module loader, every other command to main.js.
// tsc's per-file output stays in dist/ for tests and benchmarks that import a module. The bundles
// sit two folders below the root, as tsc's modules do, so paths a module resolves from its own
// location (package.json, dist/dashboard/web) are the same from either.
import { build } from "esbuild";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

/**
 * Packages bundled with the CLI: the ones `agentd run` loads before its first model request, pure
 * JavaScript that reads no file beside its own modules. Every other package is imported from
 * node_modules as before (pg and the keychain have native or optional parts, the daemon's server
 * and MCP SDK are left as they are).
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

/**
 * `agentd run` also takes pino and what it depends on into its bundle: loaded from node_modules, it
 * was the largest single cost before the first request (finding and compiling some twenty files).
 * The daemon's chunks keep pino external: its transports' workers load pino's files anyway.
 * The same for the packages the run's modules import as they load: the OpenTelemetry API and the
 * W3C propagator's file of `@opentelemetry/core` (trace scopes, with traces off too; some fifty
 * files from node_modules, each resolved, read and compiled with no code cache), standardwebhooks
 * (deliveries) and cookie (a constant of the API's). The OpenTelemetry SDK, loaded from
 * node_modules when traces are on, brings its own copy of the API: the two share their state
 * through the API's global (same version, `Symbol.for` keys), as the API is made to.
 * test/cli/run-module-loads.test.ts fails when the run loads a package from node_modules.
 */
const RUN_BUNDLED_PACKAGES = new Set([
  ...BUNDLED_PACKAGES,
  ...withDependencies("pino"),
  "@opentelemetry/api",
  "@opentelemetry/core",
  ...withDependencies("standardwebhooks"),
  "cookie",
]);

// Chunk names carry a hash of their content: the last build's would pile up. The code cache
// belongs to the last build's bundle.
rmSync(path.join(root, "dist", "chunks"), { recursive: true, force: true });
rmSync(path.join(root, "dist", "cli", "run-command.cjs.cache"), { force: true });

const plugins = (bundledPackages) => [
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
    // thread-stream (pino's transports, e.g. pino-pretty under --verbose on a terminal) starts its
    // worker from a file beside its own module: from a bundle that is a folder with no such file.
    // The worker is taken from the installed package instead, found as the bundle found it.
    name: "thread-stream-worker-from-its-package",
    setup(build) {
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]thread-stream[\\/]index\.js$/ },
        async ({ path: file }) => {
          const source = await readFile(file, "utf8");
          const workerFile = "join(__dirname, 'lib', 'worker.js')";
          if (!source.includes(workerFile))
            throw new Error(`thread-stream changed: no ${workerFile} in ${file}`);
          return {
            contents: source.replace(
              workerFile,
              // Spelled so that esbuild leaves it to run time instead of pointing at its own bundle.
              'require.resolve(["thread-stream", "lib", "worker.js"].join("/"))',
            ),
            loader: "js",
          };
        },
      );
    },
  },
  {
    name: "bundle-only-listed-packages",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, ({ path: specifier }) => {
        const name = specifier.startsWith("@") ? specifier.split("/", 2).join("/") : specifier.split("/")[0];
        return bundledPackages.has(name) ? undefined : { path: specifier, external: true };
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
  plugins: plugins(BUNDLED_PACKAGES),
});

const runBundle = await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/run-entry.ts"],
  outfile: "dist/cli/run-command.cjs",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.19",
  // Without the indentation, line breaks and comments: a third less to read and turn into a string
  // at every start (the code cache does not spare that). Names are kept, so a stack trace still
  // names the functions, at a column of the bundle's few lines.
  minifyWhitespace: true,
  metafile: true,
  // What a module reads from import.meta, in CommonJS terms.
  define: { "import.meta.dirname": "__dirname", "import.meta.url": "importMetaUrlOfBundle" },
  // import() of a package left in node_modules becomes require() (Node ≥ 20.19 requires ES modules
  // too): code-cache.ts compiles the file as a script, whose import() Node 20 refuses.
  supported: { "dynamic-import": false },
  banner: { js: 'const importMetaUrlOfBundle = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
  plugins: plugins(RUN_BUNDLED_PACKAGES),
});
asciiOnly(path.join(root, "dist", "cli", "run-command.cjs"));
// What the run's bundle holds, one path a line (the minified bundle names none):
// test/cli/run-module-loads.test.ts checks it.
writeFileSync(
  path.join(root, "dist", "cli", "run-command.modules.txt"),
  `${Object.keys(runBundle.metafile.inputs).join("\n")}\n`,
);

// What bin/agentd.js requires: `agentd run` to its bundle with no ES module loaded, the rest to main.js.
await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/launch.ts"],
  outfile: "dist/cli/launch.cjs",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.19",
  define: { "import.meta.dirname": "__dirname" },
  logLevel: "warning",
  plugins: plugins(new Set()),
});

/**
 * esbuild writes code as ASCII (non-ASCII characters escaped) but keeps comments as they are:
 * escaped there too, the whole file is ASCII and code-cache.ts reads it as Latin-1, a plain copy
 * of its bytes, instead of decoding UTF-8 (a few milliseconds for two megabytes).
 */
function asciiOnly(file) {
  const source = readFileSync(file, "utf8");
  // Per UTF-16 unit: an emoji in a comment becomes its two escaped surrogates.
  const escaped = source.replace(
    /[^\0-\x7f]/g,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  if (escaped !== source) writeFileSync(file, escaped);
}

/** A package and, transitively, the packages it depends on, as installed. */
function withDependencies(name, found = new Set()) {
  if (found.has(name)) return found;
  found.add(name);
  const manifest = JSON.parse(readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8"));
  for (const dependency of Object.keys(manifest.dependencies ?? {})) withDependencies(dependency, found);
  return found;
}
