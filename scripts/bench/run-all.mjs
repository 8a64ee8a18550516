// Runs every scripts/bench/*.bench.mjs in sequence, each in its own `node --expose-gc` process so
// one bench's heap and timers cannot skew the next. `npm run bench` builds dist/ first.
// start-history.bench.mjs builds histories of up to 200k runs for both stores and takes the longest;
// run it alone with its own options (--stores, --sizes, --starts) for a shorter pass.
// Usage: node scripts/bench/run-all.mjs [--quick] [name-filter] (--quick is passed to each bench:
// the benches that have a quick mode run a few iterations, the others as always)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const directory = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(directory, "../..");
const quick = process.argv.includes("--quick");
const filter = process.argv.slice(2).find((argument) => argument !== "--quick") ?? "";

if (!existsSync(path.join(root, "dist"))) {
  console.error("dist/ is missing: run `npm run bench` (it builds first) or `npm run build`");
  process.exit(2);
}

const benches = readdirSync(directory)
  .filter((file) => file.endsWith(".bench.mjs") && file.includes(filter))
  .sort();
if (benches.length === 0) {
  console.error(`no bench matches "${filter}"`);
  process.exit(2);
}

const failed = [];
for (const bench of benches) {
  console.log(`\n=== ${bench} ===`);
  const started = Date.now();
  const benchArguments = ["--expose-gc", path.join(directory, bench), ...(quick ? ["--quick"] : [])];
  const result = spawnSync(process.execPath, benchArguments, {
    stdio: "inherit",
    cwd: root,
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) failed.push(bench);
  console.log(
    `--- ${bench}: ${result.status === 0 ? "done" : `failed (exit ${result.status ?? result.signal})`} in ${seconds} s`,
  );
}
if (failed.length > 0) {
  console.error(`\n${failed.length} bench(es) failed: ${failed.join(", ")}`);
  process.exit(1);
}
