// Rewrites test/file-durations.json, the table test/support/longest-first-sequencer.ts starts the
// longest test files first by, from the durations vitest kept of its last runs (its cache,
// node_modules/.vite/vitest/*/results.json). Run it after a full `npm test` on a quiet machine:
//
//   node scripts/test-durations.mjs
//
// A file the last runs did not time keeps its old figure; a file that no longer exists is left out.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const tableFile = path.join(root, "test", "file-durations.json");
const cacheFolder = path.join(root, "node_modules", ".vite", "vitest");

const old = existsSync(tableFile) ? JSON.parse(readFileSync(tableFile, "utf8")).seconds : {};
const seconds = { ...old };
for (const project of existsSync(cacheFolder) ? readdirSync(cacheFolder) : []) {
  const resultsFile = path.join(cacheFolder, project, "results.json");
  if (!existsSync(resultsFile)) continue;
  for (const [key, result] of JSON.parse(readFileSync(resultsFile, "utf8")).results) {
    // Keys are "<project name>:<file from the root>".
    const file = key.slice(key.indexOf(":") + 1);
    if (typeof result.duration === "number" && result.duration > 0) {
      seconds[file] = Math.round(result.duration / 100) / 10;
    }
  }
}
const kept = Object.entries(seconds)
  .filter(([file]) => existsSync(path.join(root, file)))
  .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
writeFileSync(tableFile, `${JSON.stringify({ seconds: Object.fromEntries(kept) }, null, 2)}\n`);
console.log(`wrote ${kept.length} files' durations to ${path.relative(root, tableFile)}`);
