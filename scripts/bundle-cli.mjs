// Part of `npm run build`, after tsc: bundles the CLI, so a command loads a few files instead of
// hundreds of modules (module loading and compiling was most of a command's and a daemon's start).
// - dist/cli/run-command.cjs: `agentd run` alone in one CommonJS file.
// - dist/cli/main-command.cjs: every other command (the daemon's `start` too) in another.
//   Both are run with V8's code cache (src/cli/code-cache.ts): no module of them is compiled again
//   on the next start (Node 20 has no compile cache of its own for modules).
// - dist/cli/launch.cjs: what the bin (CommonJS) requires: each command to its bundle without
//   Node's ES module loader. tsc's dist/cli/main.js (`node dist/cli/main.js`, the tests' way in)
//   hands over to the same bundles.
// tsc's per-file output stays in dist/ for tests and benchmarks that import a module, and answers
// when the bundles are missing. The bundles sit two folders below the root, as tsc's modules do,
// so paths a module resolves from its own location (package.json, dist/dashboard/web, vendor/,
// presets/) are the same from either.
import { build } from "esbuild";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * Packages main-command.cjs leaves in node_modules; it bundles every other. Each reads files beside
 * its own modules, has native or optional parts, or is loaded only for a feature that is off by
 * default, later than the start:
 * - @napi-rs/keyring: native (the keychain vault); pg, pg-native: PostgreSQL (native part optional);
 * - web-tree-sitter: its WebAssembly file beside it (the shell tool's parser, at its first call);
 * - @fastify/swagger, @fastify/swagger-ui: static files beside them (/docs, loaded at its first call);
 * - the OpenTelemetry SDK and exporter (traces on; they share the bundled API's global state);
 * - nodemailer and undici: a delivery by e-mail or webhook, the http_request tool;
 * - fsevents: chokidar's optional native watcher on macOS.
 * test/cli/start-module-loads.test.ts fails when a daemon's start loads a package from
 * node_modules that is not one of these.
 */
const MAIN_EXTERNAL_PACKAGES = new Set([
  "@napi-rs/keyring",
  "pg",
  "pg-native",
  "web-tree-sitter",
  "@fastify/swagger",
  "@fastify/swagger-ui",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-proto",
  "@opentelemetry/resources",
  "nodemailer",
  "undici",
  "fsevents",
]);

// dist/chunks held an earlier build's ES module chunks of main.js. The code cache belongs to the
// last build's bundle.
rmSync(path.join(root, "dist", "chunks"), { recursive: true, force: true });
for (const file of readdirSync(path.join(root, "dist", "cli"))) {
  if (file.endsWith(".cache")) rmSync(path.join(root, "dist", "cli", file), { force: true });
}

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

/**
 * One command bundle: a CommonJS file in dist/cli, beside tsc's main.js, with the packages it
 * bundles, run with V8's code cache (src/cli/code-cache.ts). Returns what it holds, one path a line
 * (the minified bundle names none), written beside it for the tests that check it.
 */
async function buildCommandBundle(entryPoint, outfile, bundledPackages) {
  const bundle = await build({
    absWorkingDir: root,
    entryPoints: [entryPoint],
    outfile,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20.19",
    // Without the indentation, line breaks and comments: a third less to read and turn into a
    // string at every start (the code cache does not spare that). Names are kept, so a stack trace
    // still names the functions, at a column of the bundle's few lines.
    minifyWhitespace: true,
    // Read only when a stack trace is formatted (src/cli/source-mapped-stacks.ts), for `start`
    // or with --enable-source-maps. The src/ file and line, not its text: a smaller map.
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    // What a module reads from import.meta, in CommonJS terms.
    define: { "import.meta.dirname": "__dirname", "import.meta.url": "importMetaUrlOfBundle" },
    // import() of a package left in node_modules becomes require() (Node >= 20.19 requires ES
    // modules too): code-cache.ts compiles the file as a script, whose import() Node 20 refuses.
    supported: { "dynamic-import": false },
    banner: { js: 'const importMetaUrlOfBundle = require("node:url").pathToFileURL(__filename).href;' },
    logLevel: "warning",
    plugins: plugins(bundledPackages),
  });
  const file = path.join(root, outfile);
  asciiOnly(file);
  writeFileSync(
    file.replace(/\.cjs$/, ".modules.txt"),
    `${Object.keys(bundle.metafile.inputs).join("\n")}\n`,
  );
}

// test/cli/run-module-loads.test.ts checks what the run's bundle holds.
await buildCommandBundle("src/cli/run-entry.ts", "dist/cli/run-command.cjs", RUN_BUNDLED_PACKAGES);
// test/cli/start-module-loads.test.ts checks what a daemon's start loads beside it.
await buildCommandBundle("src/cli/main-entry.ts", "dist/cli/main-command.cjs", {
  has: (name) => !MAIN_EXTERNAL_PACKAGES.has(name),
});

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
