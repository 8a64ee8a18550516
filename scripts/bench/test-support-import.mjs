// Imports a TypeScript file of the test harness (test/support/…) from a bench: the file and the
// harness files it imports (`./x.js`), transpiled to JavaScript into `.bench-support/<pid>/` under
// the repository's root (two levels below it, as test/support is, so their paths to dist/ and their
// imports of packages such as `pg` resolve the same), removed when the process exits. The benches
// start PostgreSQL and the daemons exactly as the tests do. Not a bench itself.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformSync } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const base = path.join(ROOT, ".bench-support");
const folder = path.join(base, String(process.pid));

/** The module at `relativePath` (from the root, e.g. "test/support/postgres-server.ts"). */
export async function importTestSupport(relativePath) {
  if (!existsSync(folder)) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(base, "package.json"), '{ "type": "module" }\n');
    process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
  }
  transpile(path.join(ROOT, relativePath), new Set());
  return import(pathToFileURL(path.join(folder, `${path.basename(relativePath, ".ts")}.js`)).href);
}

function transpile(source, done) {
  if (done.has(source)) return;
  done.add(source);
  const text = readFileSync(source, "utf8");
  // esbuild, not TypeScript's transpileModule: importing the typescript package alone costs a bench
  // ~1.5 CPU-s, esbuild's transform a few tens of milliseconds; the output is the same module.
  const { code: outputText } = transformSync(text, { loader: "ts", format: "esm", target: "es2022" });
  writeFileSync(path.join(folder, `${path.basename(source, ".ts")}.js`), outputText);
  for (const [, name] of outputText.matchAll(/from\s+"\.\/([\w-]+)\.js"/g))
    transpile(path.join(path.dirname(source), `${name}.ts`), done);
}
