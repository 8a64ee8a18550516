// Regenerates docs/benchmarks.md from what the benches print: runs each scripts/bench/*.bench.mjs
// (found by listing the folder, in its own `node --expose-gc` process, one after the other), and
// rewrites, for each bench run, the block between `<!-- bench:<name> -->` and `<!-- /bench:<name> -->`
// with its output, the date, the commit, the machine's cores and its load average before and after,
// then the summary table between `<!-- bench-summary -->` and `<!-- /bench-summary -->` from every
// block in the file (each bench's ratio lines). A bench without a block gets one appended at the
// end. Blocks of benches not run this time are kept as they were (with their own date and load).
// Not a bench itself (run-all runs *.bench.mjs only). `npm run bench:docs` builds first.
// Usage: node scripts/bench/bench-docs.mjs [--quick] [name-filter…]
//   (npm run bench:docs -- llm-loop: that bench's block alone; the console shows the load before
//   and after each bench, which the block records too)
//   --quick      each bench in its quick mode (a few iterations): checks the generator, the figures
//                mean little (the block says so)
//   name-filter  a bench's name (llm-loop) for that bench alone, or a word: the benches whose file
//                name contains it
import { spawn, execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const directory = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(directory, "../..");
const documentPath = path.join(root, "docs", "benchmarks.md");
const quick = process.argv.includes("--quick");
const filters = process.argv.slice(2).filter((argument) => !argument.startsWith("--"));

if (!existsSync(path.join(root, "dist"))) {
  console.error("dist/ is missing: run `npm run bench:docs` (it builds first) or `npm run build`");
  process.exit(2);
}

const allBenches = readdirSync(directory).filter((file) => file.endsWith(".bench.mjs"));
// A filter that names a bench exactly (`llm-loop`) picks that one alone; another word picks every
// bench whose file name contains it (`loop`: llm-loop and memory-loop).
const benches = allBenches
  .filter(
    (file) =>
      filters.length === 0 ||
      filters.some((filter) =>
        allBenches.includes(`${filter}.bench.mjs`) ? file === `${filter}.bench.mjs` : file.includes(filter),
      ),
  )
  .sort();
if (benches.length === 0) {
  console.error(`no bench matches ${filters.join(", ")}`);
  process.exit(2);
}

const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
let document = readFileSync(documentPath, "utf8");
const failed = [];
for (const file of benches) {
  const name = file.slice(0, -".bench.mjs".length);
  console.log(`=== ${file} (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`);
  const result = await runBench(file);
  if (result.code !== 0) failed.push(file);
  document = replaceBlock(document, name, renderBlock(name, result));
  // Written after every bench, so a long pass stopped half-way keeps what it measured.
  writeFileSync(documentPath, withSummary(document));
  console.log(
    `--- ${file}: exit ${result.code} in ${result.seconds.toFixed(1)} s, load average ${result.loadBefore.toFixed(1)} → ${result.loadAfter.toFixed(1)} on ${cpus().length} cores${result.loadBefore > cpus().length ? " (busier than its cores: the figures are noisy, rerun on a quiet machine)" : ""}`,
  );
}
if (failed.length > 0) {
  console.error(`${failed.length} bench(es) failed: ${failed.join(", ")}`);
  process.exitCode = 1;
}

/** Runs one bench, echoing and keeping what it prints, with the load before and after. */
async function runBench(file) {
  const loadBefore = loadavg()[0];
  const started = Date.now();
  const child = spawn(
    process.execPath,
    ["--expose-gc", path.join(directory, file), ...(quick ? ["--quick"] : [])],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8").on("data", (text) => {
      output += text;
      process.stdout.write(text);
    });
  }
  const code = await new Promise((resolve) => child.on("close", (exitCode) => resolve(exitCode)));
  return {
    code,
    output,
    seconds: (Date.now() - started) / 1_000,
    loadBefore,
    loadAfter: loadavg()[0],
  };
}

function renderBlock(name, result) {
  const date = new Date().toISOString().slice(0, 16).replace("T", " ");
  const mode = quick ? "quick mode (a few iterations: not a measurement)" : "full run";
  const lines = [
    `_${date} UTC, commit ${commit}, ${mode}, ${cpus().length} cores, load average ${result.loadBefore.toFixed(1)} → ${result.loadAfter.toFixed(1)}, ${result.seconds.toFixed(0)} s, exit ${result.code}:_`,
    "",
    "```text",
    result.output.trimEnd(),
    "```",
  ];
  return lines.join("\n");
}

function markers(name) {
  return { open: `<!-- bench:${name} -->`, close: `<!-- /bench:${name} -->` };
}

/** The document with the block of `name` replaced by `body` (appended at the end when absent). */
function replaceBlock(text, name, body) {
  const { open, close } = markers(name);
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start >= 0 && end > start) return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
  return `${text.trimEnd()}\n\n## \`${name}\`\n\n${open}\n${body}\n${close}\n`;
}

/** The summary table rebuilt from every bench block in the document. */
function withSummary(text) {
  const open = "<!-- bench-summary -->";
  const close = "<!-- /bench-summary -->";
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) return text;
  const rows = [];
  for (const match of text.matchAll(/<!-- bench:([\w-]+) -->\n([\s\S]*?)<!-- \/bench:\1 -->/g)) {
    const [, name, block] = match;
    const header = block.split("\n")[0].replaceAll("_", "").replace(/:$/, "");
    const ratios = block
      .split("\n")
      .filter((line) => /ratio/i.test(line) && !line.startsWith("_"))
      .map((line) => line.trim().replaceAll("|", "\\|"));
    rows.push(`| [\`${name}\`](#${name}) | ${ratios.join("<br>") || "—"} | ${header} |`);
  }
  const table = ["| bench | ratios it printed | when, load |", "|---|---|---|", ...rows].join("\n");
  return `${text.slice(0, start + open.length)}\n${table}\n${text.slice(end)}`;
}
